// ../../src/crypto/base64.ts
var STANDARD_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
var URL_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
var utf8Encoder = new TextEncoder();
var strictUtf8Decoder = new TextDecoder("utf-8", { fatal: true });
var reverseTable = (alphabet) => {
  const table = new Int8Array(128).fill(-1);
  for (let i = 0; i < alphabet.length; i++) table[alphabet.charCodeAt(i)] = i;
  return table;
};
var STANDARD_REVERSE = reverseTable(STANDARD_ALPHABET);
var URL_REVERSE = reverseTable(URL_ALPHABET);
var encodeWith = (bytes, alphabet, pad) => {
  let out = "";
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = bytes[i] << 16 | bytes[i + 1] << 8 | bytes[i + 2];
    out += alphabet[n >> 18 & 63] + alphabet[n >> 12 & 63] + alphabet[n >> 6 & 63] + alphabet[n & 63];
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = bytes[i] << 16;
    out += alphabet[n >> 18 & 63] + alphabet[n >> 12 & 63] + (pad ? "==" : "");
  } else if (rest === 2) {
    const n = bytes[i] << 16 | bytes[i + 1] << 8;
    out += alphabet[n >> 18 & 63] + alphabet[n >> 12 & 63] + alphabet[n >> 6 & 63] + (pad ? "=" : "");
  }
  return out;
};
var decodeWith = (text, reverse, padded) => {
  let body = text;
  if (padded) {
    if (text.length % 4 !== 0) throw new TypeError("invalid base64: length is not a multiple of 4");
    if (text.endsWith("==")) body = text.slice(0, -2);
    else if (text.endsWith("=")) body = text.slice(0, -1);
  }
  if (body.length % 4 === 1) throw new TypeError("invalid base64: impossible length");
  const values = new Uint8Array(body.length);
  for (let i2 = 0; i2 < body.length; i2++) {
    const code = body.charCodeAt(i2);
    const value = code < 128 ? reverse[code] : -1;
    if (value < 0) throw new TypeError("invalid base64: unexpected character");
    values[i2] = value;
  }
  const out = new Uint8Array(Math.floor(body.length * 6 / 8));
  let o = 0;
  let i = 0;
  for (; i + 3 < values.length; i += 4) {
    const n = values[i] << 18 | values[i + 1] << 12 | values[i + 2] << 6 | values[i + 3];
    out[o++] = n >> 16;
    out[o++] = n >> 8 & 255;
    out[o++] = n & 255;
  }
  const rest = values.length - i;
  if (rest === 2) {
    if ((values[i + 1] & 15) !== 0) throw new TypeError("invalid base64: non-zero trailing bits");
    out[o++] = values[i] << 2 | values[i + 1] >> 4;
  } else if (rest === 3) {
    if ((values[i + 2] & 3) !== 0) throw new TypeError("invalid base64: non-zero trailing bits");
    const n = values[i] << 18 | values[i + 1] << 12 | values[i + 2] << 6;
    out[o++] = n >> 16;
    out[o++] = n >> 8 & 255;
  }
  return out;
};
var base64UrlEncode = (bytes) => encodeWith(bytes, URL_ALPHABET, false);
var base64UrlDecode = (text) => decodeWith(text, URL_REVERSE, false);
var base64Encode = (bytes) => encodeWith(bytes, STANDARD_ALPHABET, true);
var base64EncodeUtf8 = (text) => base64Encode(utf8Encoder.encode(text));

// ../../src/crypto/jcs.ts
import canonicalize from "canonicalize";

// ../../src/crypto/hex.ts
var HEX_DIGITS = "0123456789abcdef";
var bytesToHex = (bytes) => {
  let out = "";
  for (const byte of bytes) out += HEX_DIGITS[byte >> 4] + HEX_DIGITS[byte & 15];
  return out;
};
var isSha256Hex = (value) => typeof value === "string" && /^[0-9a-f]{64}$/.test(value);

// ../../src/crypto/jcs.ts
var utf8Encoder2 = new TextEncoder();
var strictUtf8Decoder2 = new TextDecoder("utf-8", { fatal: true });
var canonicalString = (value) => {
  if (value === void 0 || typeof value === "function" || typeof value === "symbol") {
    throw new TypeError("value has no JSON representation");
  }
  const text = canonicalize(value);
  if (text === void 0) throw new TypeError("value has no JSON representation");
  return text;
};
var canonicalBytes = (value) => utf8Encoder2.encode(canonicalString(value));
var sha256Hex = async (input) => {
  const bytes = typeof input === "string" ? utf8Encoder2.encode(input) : input;
  const digest = await globalThis.crypto.subtle.digest("SHA-256", bytes);
  return bytesToHex(new Uint8Array(digest));
};
var jcsSha256Hex = (value) => sha256Hex(canonicalBytes(value));
var parseJsonBytes = (bytes) => JSON.parse(strictUtf8Decoder2.decode(bytes));
var jsonBodySha256Hex = async (bodyBytes) => jcsSha256Hex(parseJsonBytes(bodyBytes));

// ../../src/crypto/ecdsa.ts
var ALGORITHM = { name: "ECDSA", namedCurve: "P-256" };
var SIGN_PARAMS = { name: "ECDSA", hash: "SHA-256" };
var isPublicJwk = (value) => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const jwk = value;
  return jwk.kty === "EC" && jwk.crv === "P-256" && isP256FieldElement(jwk.x) && isP256FieldElement(jwk.y);
};
var isP256FieldElement = (value) => {
  if (typeof value !== "string" || value.length !== 43) return false;
  try {
    return base64UrlDecode(value).length === 32;
  } catch {
    return false;
  }
};
var generateSigningKeyPair = (options) => globalThis.crypto.subtle.generateKey(ALGORITHM, options?.extractable ?? true, ["sign", "verify"]);
var exportPublicJwk = async (key) => {
  const jwk = await globalThis.crypto.subtle.exportKey("jwk", key);
  if (!isPublicJwk(jwk)) throw new TypeError("key is not an EC P-256 key");
  return { kty: "EC", crv: "P-256", x: jwk.x, y: jwk.y };
};
var importPublicJwk = (jwk) => {
  if (!isPublicJwk(jwk)) return Promise.reject(new TypeError("not an EC P-256 public JWK"));
  const { kty, crv, x, y } = jwk;
  return globalThis.crypto.subtle.importKey("jwk", { kty, crv, x, y }, ALGORITHM, true, ["verify"]);
};
var signRaw = async (privateKey, bytes) => new Uint8Array(await globalThis.crypto.subtle.sign(SIGN_PARAMS, privateKey, bytes));
var verifyRaw = async (publicKey, signature, bytes) => {
  if (signature.length !== 64) return false;
  try {
    return await globalThis.crypto.subtle.verify(
      SIGN_PARAMS,
      publicKey,
      signature,
      bytes
    );
  } catch {
    return false;
  }
};
var P256_SPKI_PREFIX = new Uint8Array([
  48,
  89,
  48,
  19,
  6,
  7,
  42,
  134,
  72,
  206,
  61,
  2,
  1,
  6,
  8,
  42,
  134,
  72,
  206,
  61,
  3,
  1,
  7,
  3,
  66,
  0
]);

// engine-identity:engine-identity
var ENGINE = { "id": "relay-ts", "version": "0.4.0", "sha256": "24e8c9710a9fb7046a714fed8b7b5e57ade5ce2761a8cca73f753e74fc53d40b" };

// src/errors.ts
var RelayError = class extends Error {
  status;
  code;
  requestId;
  /** The error object of the gateway's answer (`{ code, message, ... }`), when there was one. */
  body;
  constructor(input) {
    super(input.message, input.cause === void 0 ? void 0 : { cause: input.cause });
    this.name = new.target.name;
    this.status = input.status;
    this.code = input.code;
    this.requestId = input.requestId;
    this.body = input.body;
  }
};
var InvalidRequestError = class extends RelayError {
};
var AuthenticationError = class extends RelayError {
};
var InsufficientBalanceError = class extends RelayError {
};
var PermissionDeniedError = class extends RelayError {
};
var NotFoundError = class extends RelayError {
};
var ConflictError = class extends RelayError {
};
var PayloadTooLargeError = class extends RelayError {
};
var PretokenisationRequiredError = class extends RelayError {
};
var RateLimitError = class extends RelayError {
  retryAfterSeconds;
  constructor(input) {
    super(input);
    this.retryAfterSeconds = input.retryAfterSeconds;
  }
};
var ServerError = class extends RelayError {
};
var ConnectionError = class extends RelayError {
};
var TimeoutError = class extends RelayError {
};
var AbortedError = class extends RelayError {
};
var ConfigurationError = class extends RelayError {
};
var GatewayIdentityError = class extends RelayError {
};
var NameModelUnavailableError = class extends RelayError {
};
var StreamError = class extends RelayError {
};
var byStatus = (status) => {
  switch (status) {
    case 400:
      return InvalidRequestError;
    case 401:
      return AuthenticationError;
    case 402:
      return InsufficientBalanceError;
    case 403:
      return PermissionDeniedError;
    case 404:
      return NotFoundError;
    case 409:
      return ConflictError;
    case 413:
      return PayloadTooLargeError;
    case 428:
      return PretokenisationRequiredError;
    default:
      return status >= 500 ? ServerError : RelayError;
  }
};
var retryAfterSeconds = (value, now = Date.now()) => {
  if (value === null || value.trim() === "") return void 0;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds;
  const date = Date.parse(value);
  return Number.isNaN(date) ? void 0 : Math.max(0, (date - now) / 1e3);
};
var errorFromAnswer = (status, headers, bodyText) => {
  let parsed;
  try {
    parsed = JSON.parse(bodyText);
  } catch {
    parsed = void 0;
  }
  const record = typeof parsed === "object" && parsed !== null ? parsed : {};
  const inner = typeof record.error === "object" && record.error !== null ? record.error : void 0;
  const code = typeof inner?.code === "string" ? inner.code : typeof inner?.type === "string" ? inner.type : typeof record.error === "string" ? record.error : `http_${status}`;
  const message = typeof inner?.message === "string" && inner.message !== "" ? inner.message : typeof record.error_description === "string" ? record.error_description : `The gateway answered ${status}.`;
  const requestId = headers.get("x-request-id") ?? void 0;
  const input = { status, code, message, requestId, body: inner ?? (parsed === void 0 ? void 0 : record) };
  if (status === 429) return new RateLimitError({ ...input, retryAfterSeconds: retryAfterSeconds(headers.get("retry-after")) });
  const ErrorClass = byStatus(status);
  return new ErrorClass(input);
};

// src/platform.browser.ts
var browserPlatform = {
  engine: () => ENGINE,
  deviceKey: () => generateSigningKeyPair({ extractable: false }),
  readApiKeyFile: () => {
    throw new ConfigurationError({ status: 0, code: "configuration_error", message: "apiKeyFile is not available in a browser: pass apiKey." });
  },
  stableAliasSecret: async () => crypto.getRandomValues(new Uint8Array(32))
};

// ../../src/tokeniser/alias.ts
var ALIAS_PATTERN = /<[A-Z][A-Z0-9_]*_(?:\d+_[a-z2-9]{4}|[a-z2-9]{10})>/g;
var TAG_ALPHABET = "abcdefghijkmnpqrstuvwxyz23456789";
var REQUEST_TAG_LENGTH = 4;
var STABLE_TAG_LENGTH = 10;
var formatAlias = (type, index, tag) => `<${type}_${index}_${tag}>`;
var formatStableAlias = (type, tag) => `<${type}_${tag}>`;
var tagFromMac = (mac, length = REQUEST_TAG_LENGTH) => {
  let tag = "";
  for (let i = 0; i < length; i++) tag += TAG_ALPHABET[mac[i] & 31];
  return tag;
};

// ../../src/tokeniser/detokenise.ts
var detokenise = (text, map) => text.replace(new RegExp(ALIAS_PATTERN.source, "g"), (alias) => map.get(alias) ?? alias);

// ../../src/client/detokeniseResponse.ts
var detokeniseValue = (value, map) => {
  if (typeof value === "string") return detokenise(value, map);
  if (Array.isArray(value)) return value.map((item) => detokeniseValue(item, map));
  if (typeof value === "object" && value !== null) {
    const out = {};
    for (const [key, item] of Object.entries(value)) out[key] = detokeniseValue(item, map);
    return out;
  }
  return value;
};
var detokeniseResponseText = (text, map) => {
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch {
    return detokenise(text, map);
  }
  return JSON.stringify(detokeniseValue(parsed, map));
};

// ../../src/client/ProxyStartError.ts
var ProxyStartError = class extends Error {
  _tag = "ProxyStartError";
  constructor(message) {
    super(message);
    this.name = "ProxyStartError";
  }
};

// ../../src/client/gatewayUrl.ts
var GATEWAY_IDENTITY_PROBE_PATH = "/api/.well-known/service-receipt-pubkeys.jwks";
var isLoopbackHost = (hostname) => {
  const host = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (host === "localhost" || host.endsWith(".localhost") || host === "::1") return true;
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  return v4 !== null && Number(v4[1]) === 127;
};
var parseGatewayUrl = (raw) => {
  if (raw === void 0 || raw.trim() === "") {
    throw new ProxyStartError("GATEWAY_URL is not set: give the base URL of your Privacy Relay gateway (https://...).");
  }
  let url;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new ProxyStartError(`GATEWAY_URL ${JSON.stringify(raw)} is not a URL.`);
  }
  if (url.username !== "" || url.password !== "") {
    throw new ProxyStartError("GATEWAY_URL must not carry credentials; the gateway key comes from GATEWAY_KEY_FILE.");
  }
  if (url.search !== "" || url.hash !== "") {
    throw new ProxyStartError("GATEWAY_URL must not have a query or fragment.");
  }
  if (url.protocol === "http:") {
    if (!isLoopbackHost(url.hostname)) {
      throw new ProxyStartError(
        `GATEWAY_URL ${url.origin} is plain http to a non-loopback host; a gateway must be reached over https (plain http is allowed only to 127.0.0.1/localhost for development).`
      );
    }
  } else if (url.protocol !== "https:") {
    throw new ProxyStartError(`GATEWAY_URL must be an https URL, not ${url.protocol}`);
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
};
var probeGateway = async (baseUrl, options = {}) => {
  const probeUrl = `${baseUrl}${GATEWAY_IDENTITY_PROBE_PATH}`;
  const notAGateway = (why) => new ProxyStartError(
    `GATEWAY_URL ${baseUrl} is not a Privacy Relay gateway: ${why} at GET ${GATEWAY_IDENTITY_PROBE_PATH}. Client components only talk to a gateway, never to a provider.`
  );
  let response;
  try {
    response = await (options.fetch ?? fetch)(probeUrl, {
      headers: { accept: "application/json" },
      redirect: "error",
      signal: AbortSignal.timeout(options.timeoutMs ?? 1e4)
    });
  } catch (error) {
    throw new ProxyStartError(`GATEWAY_URL ${baseUrl} cannot be reached: ${error.message}`);
  }
  if (response.status !== 200) {
    await response.body?.cancel();
    throw notAGateway(`status ${response.status}`);
  }
  let jwks;
  try {
    jwks = await response.json();
  } catch {
    throw notAGateway("the answer is not JSON");
  }
  const keys = jwks?.keys;
  if (!Array.isArray(keys) || keys.length === 0 || !keys.every(isPublicJwk)) {
    throw notAGateway("the answer is not a JWKS of P-256 receipt keys");
  }
};

// ../../src/receipts/chain.ts
var GENESIS_PREV_HASH = "0".repeat(64);
var envelopeHash = (envelope) => jcsSha256Hex(envelope);
var newJti = () => bytesToHex(globalThis.crypto.getRandomValues(new Uint8Array(16)));
var unixSeconds = (date) => Math.floor(date.getTime() / 1e3);

// ../../src/receipts/signing-input.ts
var signingInput = (envelope) => {
  const { sig: _sig, signature: _signature, ...unsigned } = envelope;
  return canonicalBytes(unsigned);
};

// ../../src/receipts/signer.ts
var signEnvelope = async (unsignedEnvelope, sign) => {
  const signature = await sign(signingInput(unsignedEnvelope));
  if (signature.length !== 64) throw new TypeError("signer must return a raw 64-byte r||s signature");
  return base64UrlEncode(signature);
};

// ../../src/attestation/semver.ts
var NUMERIC = "0|[1-9]\\d*";
var PRERELEASE_ID = "(?:0|[1-9]\\d*|\\d*[A-Za-z-][0-9A-Za-z-]*)";
var SEMVER_PATTERN = new RegExp(
  `^(${NUMERIC})\\.(${NUMERIC})\\.(${NUMERIC})(?:-(${PRERELEASE_ID}(?:\\.${PRERELEASE_ID})*))?(?:\\+[0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*)?$`
);

// ../../src/attestation/engine-allowlist.ts
var engineHeaderValue = (engine) => `${engine.id}/${engine.version}`;

// ../../src/attestation/v3.ts
var ATTESTATION_ROUTES = ["chat.completions", "messages", "embeddings"];
var DEFAULT_TRUST_TIER = "self-attested";
var buildAttestation = async (input) => {
  const body = {
    v: "v3",
    alg: "ecdsa-p256-sha256",
    jti: newJti(),
    iat: unixSeconds(input.now ?? /* @__PURE__ */ new Date()),
    claims: {
      "v3-attestation": {
        route: input.route,
        egress_sha256: await jsonBodySha256Hex(input.bodyBytes),
        detectors_fired: { ...input.detectorsFired },
        engine: { id: input.engine.id, version: input.engine.version, sha256: input.engine.sha256 },
        trust_tier: input.trustTier ?? DEFAULT_TRUST_TIER,
        attester_public_key: await exportPublicJwk(input.keyPair.publicKey)
      }
    }
  };
  const sig = await signEnvelope(body, (bytes) => signRaw(input.keyPair.privateKey, bytes));
  return { ...body, sig };
};
var encodeAttestationHeader = (envelope) => base64EncodeUtf8(JSON.stringify(envelope));
var isRecord = (value) => typeof value === "object" && value !== null && !Array.isArray(value);
var isNonEmptyString = (value) => typeof value === "string" && value.length > 0;
var v3EnvelopeShapeProblem = (value) => {
  if (!isRecord(value)) return "envelope is not a JSON object";
  if (value.v !== "v3") return 'v must be "v3"';
  if (typeof value.alg !== "string") return "alg must be a string";
  if (typeof value.jti !== "string" || !/^[0-9a-f]{32}$/.test(value.jti)) return "jti must be 32 lowercase hex";
  if (!Number.isSafeInteger(value.iat)) return "iat must be an integer (Unix seconds)";
  if (typeof value.sig !== "string" || value.sig.length === 0) return "sig must be a non-empty string";
  if (!isRecord(value.claims)) return "claims must be an object";
  const claims = value.claims["v3-attestation"];
  if (!isRecord(claims)) return "claims.v3-attestation must be an object";
  if (!ATTESTATION_ROUTES.includes(claims.route)) {
    return `route must be one of ${ATTESTATION_ROUTES.join(", ")}`;
  }
  if (!isSha256Hex(claims.egress_sha256)) return "egress_sha256 must be 64 lowercase hex";
  if (!isRecord(claims.detectors_fired)) return "detectors_fired must be an object";
  for (const count of Object.values(claims.detectors_fired)) {
    if (!Number.isSafeInteger(count) || count < 0) return "detectors_fired counts must be non-negative integers";
  }
  const engine = claims.engine;
  if (!isRecord(engine) || !isNonEmptyString(engine.id) || !isNonEmptyString(engine.version)) {
    return "engine must have id and version strings";
  }
  if (!isSha256Hex(engine.sha256)) return "engine.sha256 must be 64 lowercase hex";
  if (!isNonEmptyString(claims.trust_tier)) return "trust_tier must be a non-empty string";
  if (!isPublicJwk(claims.attester_public_key)) return "attester_public_key must be an EC P-256 public JWK";
  return null;
};
var webCryptoAttestationCrypto = {
  verifyEs256: async (jwk, signature, bytes) => verifyRaw(await importPublicJwk(jwk), signature, bytes),
  jsonBodySha256Hex
};
var verifyV3Signature = async (envelope, backend = webCryptoAttestationCrypto) => {
  try {
    return await backend.verifyEs256(
      envelope.claims["v3-attestation"].attester_public_key,
      base64UrlDecode(envelope.sig),
      signingInput(envelope)
    );
  } catch {
    return false;
  }
};

// ../../src/tokeniser/builtinNameModel.ts
import nlp from "compromise";
var HONORIFIC = /^(?:(?:mr|mrs|ms|mx|dr|prof|sir|dame|madame|mme|mlle|monsieur|herr|frau|señor|señora|sr|sra)\.?\s+)+/i;
var TRAILING = /[\s.,;:!?'"’)]+$/u;
var OFFSETS_ONLY = { offset: true, terms: false };
var personMatches = (text) => {
  const candidates = nlp(text).splitAfter("@hasComma").match("#Honorific+? #Person+");
  const possessive = candidates.match("#Possessive").ifNo("(his|her)");
  return candidates.splitAfter(possessive).json(OFFSETS_ONLY);
};
var detectNamesWithCompromise = (text) => {
  const people = personMatches(text);
  const spans = [];
  for (const p of people) {
    let start = p.offset.start;
    let end = p.offset.start + p.offset.length;
    const surface = text.slice(start, end);
    const lead = HONORIFIC.exec(surface)?.[0].length ?? 0;
    const trail = TRAILING.exec(surface)?.[0].length ?? 0;
    start += lead;
    end -= trail;
    if (/['’]s$/.test(text.slice(start, end))) end -= 2;
    if (end > start && /\p{Lu}/u.test(text[start] ?? "")) spans.push({ start, end, type: "PERSON" });
  }
  return spans;
};
var builtinNameModel = {
  detect: async (text) => detectNamesWithCompromise(text)
};

// ../../src/tokeniser/detectors/context.ts
var textBefore = (text, index, width) => {
  const from = Math.max(0, index - width);
  const slice = text.slice(from, index);
  const newline = slice.lastIndexOf("\n");
  return newline === -1 ? slice : slice.slice(newline + 1);
};
var NON_PERSONAL_NUMBER_LABEL = /(?:\b(?:order|orders|invoice|invoices|inv|tracking|track|ref|reference|ticket|case|isbn(?:-1[03])?|issn|ean|upc|sku|serial|s\/n|part|item|article|confirmation|booking|reservation|shipment|parcel|package|po|receipt|build|commande|facture|rechnung|bestellung|bestellnummer|auftrag|pedido|factura|referencia|n[ºo°]\s*de\s*pedido)\b\.?\s*(?:no\.?|nr\.?|number|num\.?|n[ºo°]|#|id|code|numéro|nummer|número)?\s*[:#=]?\s*)$/i;
var followsNonPersonalLabel = (text, index) => NON_PERSONAL_NUMBER_LABEL.test(textBefore(text, index, 40));
var isDelimited = (text, start, end) => {
  const before = start === 0 ? "" : text[start - 1];
  const after = end >= text.length ? "" : text[end];
  return !/[\p{L}\p{N}]/u.test(before) && !/[\p{L}\p{N}]/u.test(after);
};

// ../../src/tokeniser/detectors/luhn.ts
var passesLuhn = (digits) => {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return digits.length > 0 && sum % 10 === 0;
};

// ../../src/tokeniser/detectors/card.ts
var prefixIn = (digits, width, low, high) => {
  const p = Number(digits.slice(0, width));
  return p >= low && p <= high;
};
var range = (from, to) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
var SCHEMES = [
  { name: "visa", matches: (d) => d.startsWith("4"), lengths: [13, 16, 19] },
  {
    name: "mastercard",
    matches: (d) => prefixIn(d, 2, 51, 55) || prefixIn(d, 4, 2221, 2720),
    lengths: [16]
  },
  { name: "amex", matches: (d) => d.startsWith("34") || d.startsWith("37"), lengths: [15] },
  {
    name: "discover",
    matches: (d) => d.startsWith("6011") || d.startsWith("65") || prefixIn(d, 3, 644, 649),
    lengths: range(16, 19)
  },
  { name: "jcb", matches: (d) => prefixIn(d, 4, 3528, 3589), lengths: range(16, 19) },
  { name: "diners", matches: (d) => d.startsWith("36") || prefixIn(d, 3, 300, 305), lengths: range(14, 19) },
  { name: "unionpay", matches: (d) => d.startsWith("62"), lengths: range(16, 19) }
];
var cardScheme = (digits) => SCHEMES.find((s) => s.matches(digits) && s.lengths.includes(digits.length))?.name;
var isValidCardNumber = (digits) => /^\d{13,19}$/.test(digits) && cardScheme(digits) !== void 0 && passesLuhn(digits);
var CARD_CANDIDATE = /(?<![\d\-])\d+(?:(?: \d+)+|(?:-\d+)+)?(?![\d]|-\d)/g;
var groupsOf = (run, offset) => {
  const groups = [];
  const re = /\d+/g;
  for (let g = re.exec(run); g !== null; g = re.exec(run)) {
    groups.push({ start: offset + g.index, end: offset + g.index + g[0].length, text: g[0] });
  }
  return groups;
};
var cardsIn = (text, groups) => {
  for (let size = groups.length; size >= 1; size--) {
    for (let i = 0; i + size <= groups.length; i++) {
      const chosen = groups.slice(i, i + size);
      if (size > 1 && chosen.some((g) => g.text.length < 2 || g.text.length > 8)) continue;
      if (!isValidCardNumber(chosen.map((g) => g.text).join(""))) continue;
      const start = chosen[0].start;
      const end = chosen[size - 1].end;
      if (!isDelimited(text, start, end) || followsNonPersonalLabel(text, start)) continue;
      return [...cardsIn(text, groups.slice(0, i)), { start, end, type: "CARD" }, ...cardsIn(text, groups.slice(i + size))];
    }
  }
  return [];
};
var cardDetector = {
  type: "CARD",
  detect: (text) => [...text.matchAll(CARD_CANDIDATE)].flatMap((m) => cardsIn(text, groupsOf(m[0], m.index)))
};

// ../../src/tokeniser/detectors/bech32.ts
var CHARSET = "qpzry9x8gf2tvdw0s3jn54khce6mua7l";
var GENERATORS = [996825010, 642813549, 513874426, 1027748829, 705979059];
var polymod = (values) => {
  let chk = 1;
  for (const v of values) {
    const top = chk >>> 25;
    chk = (chk & 33554431) << 5 ^ v;
    for (let i = 0; i < 5; i++) if (top >>> i & 1) chk ^= GENERATORS[i];
  }
  return chk >>> 0;
};
var hasValidBech32Checksum = (address) => {
  if (address !== address.toLowerCase() && address !== address.toUpperCase()) return false;
  const a = address.toLowerCase();
  const sep = a.lastIndexOf("1");
  if (sep < 1 || sep + 7 > a.length) return false;
  const hrp = a.slice(0, sep);
  const data = [];
  for (const c of a.slice(sep + 1)) {
    const v = CHARSET.indexOf(c);
    if (v === -1) return false;
    data.push(v);
  }
  const expanded = [...[...hrp].map((c) => c.charCodeAt(0) >> 5), 0, ...[...hrp].map((c) => c.charCodeAt(0) & 31)];
  const check = polymod([...expanded, ...data]);
  return check === 1 || check === 734539939;
};

// ../../src/tokeniser/detectors/Detector.ts
var spansFromRegex = (text, pattern, type, accept) => {
  const spans = [];
  const regex = new RegExp(pattern.source, pattern.flags.includes("g") ? pattern.flags : pattern.flags + "g");
  for (let m = regex.exec(text); m !== null; m = regex.exec(text)) {
    if (m[0].length === 0) {
      regex.lastIndex++;
      continue;
    }
    const range2 = accept(m);
    if (range2 !== void 0) spans.push({ start: range2.start, end: range2.end, type });
  }
  return spans;
};

// ../../src/tokeniser/detectors/cryptoWallet.ts
var WALLET = /(?<![\p{L}\p{N}])(?:(?:bc1|BC1)[02-9ac-hj-np-zAC-HJ-NP-Z]{11,71}|[13][1-9A-HJ-NP-Za-km-z]{25,34}|0x[0-9a-fA-F]{40})(?![\p{L}\p{N}])/gu;
var cryptoWalletDetector = {
  type: "CRYPTO_WALLET",
  detect: (text) => spansFromRegex(text, WALLET, "CRYPTO_WALLET", (m) => {
    const value = m[0];
    if (/^bc1/i.test(value) && !hasValidBech32Checksum(value)) return void 0;
    if (/^[13]/.test(value) && !(/[a-z]/.test(value) && /[A-Z]/.test(value) && /\d.*\d/.test(value.slice(1)))) return void 0;
    return { start: m.index, end: m.index + value.length };
  })
};

// ../../src/tokeniser/detectors/dateOfBirth.ts
var CUE = String.raw`(?:\bborn(?:\s+on)?|\bd\.?o\.?b\.?|\bdate\s+of\s+birth|\bbirth\s?date|\bbirthday(?:\s+is)?|\bné(?:e)?\s+le|\bdate\s+de\s+naissance|\bgeboren(?:\s+am)?|\bgeburtsdatum|\bfecha\s+de\s+nacimiento|\bnacid[oa]\s+el|\bdata\s+di\s+nascita|\bnato\s+il|\bnata\s+il|\bgeboortedatum|\bgeboren\s+op)`;
var MONTHS = "january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|janvier|f\xE9vrier|fevrier|mars|avril|mai|juin|juillet|ao\xFBt|aout|septembre|octobre|novembre|d\xE9cembre|decembre|januar|februar|m\xE4rz|maerz|juni|juli|oktober|dezember|enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|octubre|noviembre|diciembre|gennaio|febbraio|aprile|maggio|giugno|luglio|settembre|ottobre|dicembre|januari|februari|maart|mei|augustus";
var DATE = String.raw`(?:\d{4}-\d{2}-\d{2}|\d{1,2}[./\-]\d{1,2}[./\-](?:\d{4}|\d{2})|\d{1,2}\.?\s+(?:de\s+)?(?:${MONTHS})\.?,?\s+(?:de\s+)?\d{4}|(?:${MONTHS})\.?\s+\d{1,2}(?:st|nd|rd|th)?,?\s+\d{4})`;
var DOB = new RegExp(`${CUE}\\s*(?:[:\\-\u2013]|is|was|on|am|le|el|il)?\\s*(${DATE})(?![\\p{L}\\p{N}])`, "giu");
var plausible = (date) => {
  const numbers = date.match(/\d+/g)?.map(Number) ?? [];
  const year = numbers.find((n) => n > 31) ?? numbers[numbers.length - 1];
  return numbers.every((n) => n >= 0) && year !== void 0 && (year < 100 || year >= 1900 && year <= 2100);
};
var dateOfBirthDetector = {
  type: "DATE_OF_BIRTH",
  detect: (text) => spansFromRegex(text, DOB, "DATE_OF_BIRTH", (m) => {
    const date = m[1];
    if (!plausible(date)) return void 0;
    const start = m.index + m[0].length - date.length;
    return { start, end: m.index + m[0].length };
  })
};

// ../../src/tokeniser/detectors/email.ts
var EMAIL = /(?<![\p{L}\p{N}._%+\-])[A-Za-z0-9_%+\-]+(?:\.[A-Za-z0-9_%+\-]+)*@(?:[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}(?![\p{L}\p{N}\-]|\.[A-Za-z0-9])/gu;
var emailDetector = {
  type: "EMAIL",
  detect: (text) => spansFromRegex(text, EMAIL, "EMAIL", (m) => {
    const end = m.index + m[0].length;
    if (/^:[^\s]/.test(text.slice(end, end + 2))) return void 0;
    return { start: m.index, end };
  })
};

// ../../src/tokeniser/detectors/esDni.ts
var CHECK_LETTERS = "TRWAGMYFPDXBNJZSQVHLCKE";
var isValidEsDni = (value) => {
  const v = value.toUpperCase().replace(/[\s\-]/g, "");
  const m = /^([XYZ]|\d)(\d{7})([A-Z])$/.exec(v);
  if (m === null) return false;
  const lead = m[1] === "X" ? "0" : m[1] === "Y" ? "1" : m[1] === "Z" ? "2" : m[1];
  return CHECK_LETTERS[Number(lead + m[2]) % 23] === m[3];
};
var DNI = /(?<![\p{L}\p{N}])(?:[XYZxyz][\- ]?\d{7}|\d{8})[\- ]?[A-Za-z](?![\p{L}\p{N}])/gu;
var esDniDetector = {
  type: "ES_DNI",
  detect: (text) => spansFromRegex(
    text,
    DNI,
    "ES_DNI",
    (m) => isValidEsDni(m[0]) ? { start: m.index, end: m.index + m[0].length } : void 0
  )
};

// ../../src/tokeniser/detectors/frNir.ts
var isValidFrNir = (value) => {
  const v = value.toUpperCase().replace(/[\s.]/g, "");
  const m = /^([12])(\d{2})(\d{2})(\d{2}|2A|2B)(\d{3})(\d{3})(\d{2})$/.exec(v);
  if (m === null) return false;
  const month = Number(m[3]);
  if (!(month >= 1 && month <= 12 || month >= 20 && month <= 42 || month >= 50 && month <= 99)) return false;
  const dept = m[4] === "2A" ? "19" : m[4] === "2B" ? "18" : m[4];
  const body = BigInt(m[1] + m[2] + m[3] + dept + m[5] + m[6]);
  const key = 97n - body % 97n;
  return key === BigInt(m[7]);
};
var NIR = /(?<![\p{L}\p{N}])[12](?:([ .]?)\d{2}\1\d{2}\1(?:\d{2}|2[AB])\1\d{3}\1\d{3}\1\d{2})(?![\p{L}\p{N}])/gu;
var frNirDetector = {
  type: "FR_NIR",
  detect: (text) => spansFromRegex(
    text,
    NIR,
    "FR_NIR",
    (m) => isValidFrNir(m[0]) ? { start: m.index, end: m.index + m[0].length } : void 0
  )
};

// ../../src/tokeniser/detectors/iban.ts
import { electronicFormatIBAN, isValidIBAN } from "ibantools";
var IBAN_CANDIDATE = /(?<![\p{L}\p{N}])[A-Za-z]{2}\d{2}(?: ?[A-Za-z0-9]{1,4}){3,9}(?![\p{L}\p{N}])/gu;
var ibanDetector = {
  type: "IBAN",
  detect: (text) => {
    const spans = [];
    const candidates = new RegExp(IBAN_CANDIDATE.source, "gu");
    for (let m = candidates.exec(text); m !== null; m = candidates.exec(text)) {
      const start = m.index;
      let candidate = m[0];
      while (candidate.length >= 15) {
        const electronic = electronicFormatIBAN(candidate);
        if (electronic !== null && electronic !== void 0 && isValidIBAN(electronic)) {
          spans.push({ start, end: start + candidate.length, type: "IBAN" });
          break;
        }
        const cut = candidate.lastIndexOf(" ");
        if (cut <= 4) break;
        candidate = candidate.slice(0, cut);
      }
      const found = spans.length > 0 && spans[spans.length - 1].start === start;
      candidates.lastIndex = found ? spans[spans.length - 1].end : start + 1;
    }
    return spans;
  }
};

// ../../src/tokeniser/detectors/ipv4.ts
var IPV4 = /(?<![\p{L}\p{N}._\-])(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?![\p{L}\p{N}_]|\.\d|-[A-Za-z])/gu;
var VERSION_CUE = /(?:\b(?:v|ver|version|versión|versione|release|build|firmware|fw|rev|revision|update|patch|sdk|api|kb|chrome|firefox|edge|windows|ios|android|macos)\.?\s*[:=]?\s*|\bv)$/i;
var NETWORK_CUE = /\b(?:ip|ipv4|ips|address|addresses|addr|host|hosts|hostname|server|servers|client|peer|from|to|connect|connected|connection|login|logged|access|log|logs|firewall|blocked|block|ban|banned|allow|allowlist|whitelist|blacklist|denylist|gateway|router|dns|resolver|nameserver|proxy|vpn|subnet|netmask|route|ping|ssh|telnet|listen|bind|nat|lan|wan|remote|source|destination|src|dst|adresse|adresa|dirección|direccion|indirizzo|ip-adresse|attacker)\b/i;
var isOctet = (s) => (s === "0" || !s.startsWith("0")) && Number(s) <= 255;
var lineAround = (text, start, end) => {
  const lineStart = text.lastIndexOf("\n", start - 1) + 1;
  const nl = text.indexOf("\n", end);
  const lineEnd = nl === -1 ? text.length : nl;
  return { before: text.slice(Math.max(lineStart, start - 80), start), after: text.slice(end, Math.min(lineEnd, end + 40)) };
};
var ipv4Detector = {
  type: "IPV4",
  detect: (text) => spansFromRegex(text, IPV4, "IPV4", (m) => {
    const start = m.index;
    const end = start + m[0].length;
    if (![m[1], m[2], m[3], m[4]].every(isOctet)) return void 0;
    if (VERSION_CUE.test(textBefore(text, start, 30))) return void 0;
    const { before, after } = lineAround(text, start, end);
    const announced = NETWORK_CUE.test(before) || NETWORK_CUE.test(after) || /^(?::\d{1,5}\b|\/\d{1,2}\b)/.test(after) || textBefore(text, start, 200).trim() === "";
    return announced ? { start, end } : void 0;
  })
};

// ../../src/tokeniser/detectors/ipv6.ts
var isValidIpv6 = (value) => {
  let head = value;
  let groupsAvailable = 8;
  const v4 = /^(.*:)(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(value);
  if (v4 !== null) {
    const octets = [v4[2], v4[3], v4[4], v4[5]];
    if (!octets.every((o) => (o === "0" || !o.startsWith("0")) && Number(o) <= 255)) return false;
    head = v4[1].endsWith("::") ? v4[1] : v4[1].slice(0, -1);
    groupsAvailable = 6;
  }
  const halves = head.split("::");
  if (halves.length > 2) return false;
  const parse = (part) => {
    if (part === "") return [];
    const groups = part.split(":");
    return groups.every((g) => /^[0-9A-Fa-f]{1,4}$/.test(g)) ? groups : void 0;
  };
  if (halves.length === 1) {
    const groups = parse(halves[0]);
    return groups !== void 0 && groups.length === groupsAvailable;
  }
  const left = parse(halves[0]);
  const right = parse(halves[1]);
  return left !== void 0 && right !== void 0 && left.length + right.length < groupsAvailable;
};
var IPV6_CANDIDATE = /(?<![\p{L}\p{N}:.])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:\d{1,3}(?:\.\d{1,3}){3}|[0-9A-Fa-f]{0,4})(?![\p{L}\p{N}:]|\.\d)/gu;
var ipv6Detector = {
  type: "IPV6",
  detect: (text) => spansFromRegex(
    text,
    IPV6_CANDIDATE,
    "IPV6",
    (m) => isValidIpv6(m[0]) && /[0-9A-Fa-f]/.test(m[0]) ? { start: m.index, end: m.index + m[0].length } : void 0
  )
};

// ../../src/tokeniser/detectors/nlBsn.ts
var isValidBsn = (digits) => {
  if (!/^\d{9}$/.test(digits) || digits === "000000000") return false;
  let sum = 0;
  for (let i = 0; i < 8; i++) sum += (9 - i) * Number(digits[i]);
  sum -= Number(digits[8]);
  return sum % 11 === 0;
};
var BSN_CUE = /\b(?:bsn|burgerservicenummer|burger ?service ?nummer|sofinummer|sofi-nummer|citizen service number)\b[\s-]*(?:nr\.?|nummer|number|no\.?|is|:)?\s*[:#]?\s*$/i;
var BSN = /(?<![\p{L}\p{N}.])(\d{4})([. ]?)(\d{2})\2(\d{3})(?![\p{N}]|[.]\d)/gu;
var nlBsnDetector = {
  type: "NL_BSN",
  detect: (text) => spansFromRegex(
    text,
    BSN,
    "NL_BSN",
    (m) => isValidBsn(m[1] + m[3] + m[4]) && BSN_CUE.test(textBefore(text, m.index, 50)) ? { start: m.index, end: m.index + m[0].length } : void 0
  )
};

// ../../src/tokeniser/detectors/passport.ts
var PASSPORT = /\b(?:passport|passeport|reisepass|pasaporte|passaporto|paspoort)(?:\s*(?:no\.?|nr\.?|number|num\.?|n[º°o.]\.?|#|nummer|número|numéro|numero|id))?\s*(?:[:#]|is)?\s*([A-Z0-9]{6,9})(?![\p{L}\p{N}])/giu;
var passportDetector = {
  type: "PASSPORT",
  detect: (text) => spansFromRegex(text, PASSPORT, "PASSPORT", (m) => {
    const value = m[1];
    if (!/\d/.test(value) || value !== value.toUpperCase()) return void 0;
    const start = m.index + m[0].length - value.length;
    return { start, end: start + value.length };
  })
};

// ../../src/tokeniser/detectors/phone.ts
import { findNumbers } from "libphonenumber-js/max";
var isInternational = (raw) => /^(?:\+|00[1-9])/.test(raw);
var PHONE_CUE = /\b(?:tel|tél|phone|telephone|téléphone|telefon|telefono|teléfono|telefoon|mobile|mobil|mobiel|móvil|cell|cellphone|handy|portable|fax|call|calling|dial|ring|ruf|rufen|appelez|appeler|llama|llámame|llámanos|bel|chiama|chiamami|text|sms|whatsapp|number|numéro|nummer|número|numero|contact)\b[^\n\d]{0,20}$/i;
var looksLikeNationalPhone = (text, start, raw) => {
  const digits = raw.replace(/\D/g, "");
  if (digits.length < 9) return false;
  const body = raw.replace(/\s*(?:ext\.?|x|#)\s*\d+$/i, "");
  const groups = body.split(/[^\d]+/).filter((g) => g !== "");
  if (groups.slice(1).some((g) => g.length < 2)) return false;
  if (body.includes(".") && !/^\d{3}\.\d{3}\.\d{4}$/.test(body) && !/^0\d(?:\.\d{2}){4}$/.test(body)) return false;
  if (body.includes("-")) {
    const dashed = body.replace(/^\(\d+\)\s*/, "").split(/[- ]/);
    if (dashed.some((g) => g.length < 2 || g.length > 4)) return false;
    if (/^\d{3}-\d{2}-\d{4}$/.test(body)) return false;
  }
  if (/^\d+$/.test(body)) return PHONE_CUE.test(textBefore(text, start, 40));
  return true;
};
var withoutEmptyBrackets = (text) => text.replace(/[(\[][^\d()[\]\n]*[)\]]/g, (group) => " ".repeat(group.length));
var makePhoneDetector = (regions) => ({
  type: "PHONE",
  detect: (text) => {
    const found = [];
    const scanned = withoutEmptyBrackets(text);
    for (const region of regions) {
      for (const hit of findNumbers(scanned, { defaultCountry: region, v2: true })) {
        if (!hit.number.isValid()) continue;
        let start = hit.startsAt;
        let end = hit.endsAt;
        const unbalanced = (s) => (s.match(/\(/g)?.length ?? 0) - (s.match(/\)/g)?.length ?? 0);
        for (; ; ) {
          const head = text.slice(start, end);
          if (end - start <= 1) break;
          if (!/^(?:\d|\+|\(\+?\d)/.test(head) || head.startsWith("(") && unbalanced(head) > 0) start += 1;
          else break;
        }
        while (unbalanced(text.slice(start, end)) < 0 && text.slice(start, end).endsWith(")")) end -= 1;
        const raw = text.slice(start, end);
        if (!raw.startsWith("+") && followsNonPersonalLabel(text, start)) continue;
        if (!isDelimited(text, start, end)) continue;
        if (hit.number.ext !== void 0 && !/(?:ext\.?|x|#)\s*\d+$/i.test(raw)) continue;
        if (!isInternational(raw) && !looksLikeNationalPhone(text, start, raw)) continue;
        found.push({ start, end, type: "PHONE" });
      }
    }
    const seen = /* @__PURE__ */ new Set();
    return found.filter((s) => {
      const key = `${s.start}:${s.end}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  }
});
var DEFAULT_PHONE_REGIONS = ["US", "GB", "FR", "DE", "ES", "NL"];

// ../../src/tokeniser/detectors/ukNino.ts
var NINO = /(?<![\p{L}\p{N}])([A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]) ?(\d{2}) ?(\d{2}) ?(\d{2}) ?([A-D])(?![\p{L}\p{N}])/gu;
var NEVER_ISSUED = /* @__PURE__ */ new Set(["BG", "GB", "KN", "NK", "NT", "TN", "ZZ"]);
var ukNinoDetector = {
  type: "UK_NINO",
  detect: (text) => spansFromRegex(text, NINO, "UK_NINO", (m) => {
    if (NEVER_ISSUED.has(m[1])) return void 0;
    const spaced = m[0].replace(/[A-Z]/g, "").split(" ").length;
    if (spaced !== 1 && spaced !== 5) return void 0;
    return { start: m.index, end: m.index + m[0].length };
  })
};

// ../../src/tokeniser/detectors/urlCredentials.ts
var URL_WITH_CREDENTIALS = /\b[a-zA-Z][a-zA-Z0-9+.\-]{1,15}:\/\/[^\s:/@?#<>"']+:[^\s/@?#<>"']+@[A-Za-z0-9.\-_\[\]:]*[A-Za-z0-9\]]/g;
var urlCredentialsDetector = {
  type: "URL_CREDENTIALS",
  detect: (text) => spansFromRegex(text, URL_WITH_CREDENTIALS, "URL_CREDENTIALS", (m) => ({ start: m.index, end: m.index + m[0].length }))
};

// ../../src/tokeniser/detectors/usSsn.ts
var isValidSsn = (area, group, serial) => {
  const a = Number(area);
  return a !== 0 && a !== 666 && a < 900 && group !== "00" && serial !== "0000";
};
var SSN_PRINTED = /(?<![\d\-])(\d{3})([\- ])(\d{2})\2(\d{4})(?![\d]|-\d)/g;
var SSN_BARE = /(?<![\d\-])(\d{3})(\d{2})(\d{4})(?![\d]|-\d)/g;
var SSN_CUE = /\b(?:ssn|social security(?: number| no\.?)?|soc\.? sec\.?(?: no\.?)?)\s*(?:#|no\.?|number)?\s*[:#]?\s*$/i;
var usSsnDetector = {
  type: "US_SSN",
  detect: (text) => [
    ...spansFromRegex(
      text,
      SSN_PRINTED,
      "US_SSN",
      (m) => isValidSsn(m[1], m[3], m[4]) && !followsNonPersonalLabel(text, m.index) && !/[\p{L}]$/u.test(text.slice(0, m.index)) ? { start: m.index, end: m.index + m[0].length } : void 0
    ),
    ...spansFromRegex(
      text,
      SSN_BARE,
      "US_SSN",
      (m) => isValidSsn(m[1], m[2], m[3]) && SSN_CUE.test(textBefore(text, m.index, 40)) ? { start: m.index, end: m.index + m[0].length } : void 0
    )
  ]
};

// ../../src/tokeniser/detectStructured.ts
var PRIORITY = [
  "URL_CREDENTIALS",
  "EMAIL",
  "IBAN",
  "CARD",
  "FR_NIR",
  "US_SSN",
  "UK_NINO",
  "ES_DNI",
  "NL_BSN",
  "DATE_OF_BIRTH",
  "PASSPORT",
  "CRYPTO_WALLET",
  "IPV6",
  "IPV4",
  "PHONE",
  "PERSON"
];
var structuredDetectors = (options = {}) => [
  urlCredentialsDetector,
  emailDetector,
  ibanDetector,
  cardDetector,
  frNirDetector,
  usSsnDetector,
  ukNinoDetector,
  esDniDetector,
  nlBsnDetector,
  dateOfBirthDetector,
  passportDetector,
  cryptoWalletDetector,
  ipv6Detector,
  ipv4Detector,
  makePhoneDetector(options.phoneRegions ?? DEFAULT_PHONE_REGIONS)
];
var resolveOverlaps = (spans) => {
  const rank = (s) => PRIORITY.indexOf(s.type);
  const ordered = [...spans].sort(
    (a, b) => rank(a) - rank(b) || b.end - b.start - (a.end - a.start) || a.start - b.start
  );
  const kept = [];
  for (const s of ordered) {
    if (s.end <= s.start) continue;
    if (kept.every((k) => s.end <= k.start || s.start >= k.end)) kept.push(s);
  }
  return kept.sort((a, b) => a.start - b.start);
};
var maskSpans = (text, spans) => {
  const ordered = [...spans].sort((a, b) => a.start - b.start);
  const parts = [];
  let at = 0;
  for (const s of ordered) {
    if (s.end <= at) continue;
    const from = Math.max(at, s.start);
    parts.push(text.slice(at, from), "Q".repeat(s.end - from));
    at = s.end;
  }
  parts.push(text.slice(at));
  return parts.join("");
};
var detectStructured = (text, detectors = structuredDetectors()) => {
  const others = detectors.filter((d) => d.type !== "PHONE").flatMap((d) => d.detect(text));
  const phones = detectors.filter((d) => d.type === "PHONE");
  if (phones.length === 0) return resolveOverlaps(others);
  return resolveOverlaps([...others, ...phones.flatMap((d) => d.detect(maskSpans(text, others)))]);
};

// ../../src/tokeniser/NameModel.ts
var NameModelUnavailable = class extends Error {
  _tag = "NameModelUnavailable";
  cause;
  constructor(message, cause) {
    super(message);
    this.name = "NameModelUnavailable";
    this.cause = cause;
  }
};

// ../../src/tokeniser/httpNameModel.ts
var httpNameModel = (options) => ({
  detect: async (text, call) => {
    const doFetch = options.fetch ?? globalThis.fetch;
    let response;
    try {
      response = await doFetch(options.url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json", ...options.headers },
        body: JSON.stringify({ text }),
        signal: AbortSignal.any([
          AbortSignal.timeout(options.timeoutMs ?? 5e3),
          ...call?.signal === void 0 ? [] : [call.signal]
        ])
      });
    } catch (cause) {
      throw new NameModelUnavailable(`name model endpoint unreachable: ${options.url}`, cause);
    }
    if (!response.ok) {
      throw new NameModelUnavailable(`name model endpoint answered HTTP ${response.status}: ${options.url}`);
    }
    let payload;
    try {
      payload = await response.json();
    } catch (cause) {
      throw new NameModelUnavailable("name model endpoint answered a body that is not JSON", cause);
    }
    const entities = payload?.entities;
    if (!Array.isArray(entities)) {
      throw new NameModelUnavailable('name model endpoint answered without an "entities" array');
    }
    const spans = [];
    for (const e of entities) {
      const { start, end, type } = e ?? {};
      if (!Number.isInteger(start) || !Number.isInteger(end) || typeof type !== "string") {
        throw new NameModelUnavailable("name model endpoint answered a malformed entity");
      }
      const s = start;
      const en = end;
      if (s < 0 || en > text.length || en <= s) {
        throw new NameModelUnavailable("name model endpoint answered an entity outside the text");
      }
      if (type.toUpperCase() === "PERSON") spans.push({ start: s, end: en, type: "PERSON" });
    }
    return spans;
  }
});

// ../../src/tokeniser/session.ts
var hmacKey = (secret) => globalThis.crypto.subtle.importKey("raw", secret, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
var hmac = async (key, message) => new Uint8Array(await globalThis.crypto.subtle.sign("HMAC", await key, new TextEncoder().encode(message)));
var createSession = (opts = {}) => {
  const stableKey = opts.stableAliasSecret === void 0 ? void 0 : hmacKey(opts.stableAliasSecret);
  const key = hmacKey(opts.secret ?? globalThis.crypto.getRandomValues(new Uint8Array(32)));
  const map = /* @__PURE__ */ new Map();
  const byValue = /* @__PURE__ */ new Map();
  const counters = /* @__PURE__ */ new Map();
  const fired = {};
  const observed = /* @__PURE__ */ new Set();
  let nameModelSkipped = false;
  const collides = (alias) => map.has(alias) || observed.has(alias);
  const candidate = async (type, index, value, attempt) => stableKey === void 0 ? formatAlias(type, index, tagFromMac(await hmac(key, `${type}_${index}#${attempt}`))) : formatStableAlias(
    type,
    tagFromMac(await hmac(stableKey, attempt === 0 ? `${type}\0${value}` : `${type}\0${value}\0${attempt}`), STABLE_TAG_LENGTH)
  );
  const mint = async (type, index, value) => {
    for (let attempt = 0; ; attempt++) {
      const alias = await candidate(type, index, value, attempt);
      if (!collides(alias)) {
        map.set(alias, value);
        return alias;
      }
    }
  };
  return {
    names: opts.names ?? builtinNameModel,
    failOpen: opts.failOpen ?? false,
    detectors: structuredDetectors(opts.phoneRegions === void 0 ? {} : { phoneRegions: opts.phoneRegions }),
    map,
    detectorsFired: fired,
    get nameModelSkipped() {
      return nameModelSkipped;
    },
    observe: (text) => {
      for (const [aliasLike] of text.matchAll(ALIAS_PATTERN)) observed.add(aliasLike);
    },
    aliasFor: (type, value) => {
      const id = `${type}\0${value}`;
      const existing = byValue.get(id);
      if (existing !== void 0) return existing;
      const index = (counters.get(type) ?? 0) + 1;
      counters.set(type, index);
      const alias = mint(type, index, value);
      byValue.set(id, alias);
      return alias;
    },
    countFired: (type) => {
      fired[type] = (fired[type] ?? 0) + 1;
    },
    markNameModelSkipped: () => {
      nameModelSkipped = true;
    }
  };
};

// ../../src/tokeniser/streamingDetokeniser.ts
var createStreamingDetokeniser = (map) => {
  const aliases = [...map.keys()];
  let pending = "";
  return {
    push: (chunk) => {
      pending += chunk;
      const lt = pending.lastIndexOf("<");
      if (lt !== -1) {
        const tail = pending.slice(lt);
        if (aliases.some((a) => a.length > tail.length && a.startsWith(tail))) {
          const ready2 = pending.slice(0, lt);
          pending = tail;
          return detokenise(ready2, map);
        }
      }
      const ready = pending;
      pending = "";
      return detokenise(ready, map);
    },
    flush: () => {
      const rest = pending;
      pending = "";
      return detokenise(rest, map);
    }
  };
};

// ../../src/tokeniser/tokeniseRequest.ts
import canonicalize2 from "canonicalize";

// ../../src/tokeniser/checkpoint.ts
var DEFAULT_SLICE_MS = 20;
var nextTurn = () => new Promise((resolve) => {
  const immediate = globalThis.setImmediate;
  if (immediate !== void 0) immediate(resolve);
  else setTimeout(resolve, 0);
});
var createCheckpoint = (signal, sliceMs = DEFAULT_SLICE_MS) => {
  let since = performance.now();
  return async () => {
    signal?.throwIfAborted();
    if (performance.now() - since < sliceMs) return;
    await nextTurn();
    since = performance.now();
    signal?.throwIfAborted();
  };
};

// ../../src/tokeniser/textWindows.ts
var DEFAULT_WINDOW_SIZE = 8192;
var DEFAULT_WINDOW_OVERLAP = 512;
var isSpace = (code) => code === 32 || code === 9 || code === 10 || code === 13 || code === 12;
var isSentenceEnd = (code) => code === 46 || code === 33 || code === 63;
var isHighSurrogate = (code) => code >= 55296 && code <= 56319;
var cutPoint = (text, floor, limit) => {
  let sentence = -1;
  let space = -1;
  for (let i = limit - 1; i > floor; i--) {
    const code = text.charCodeAt(i);
    if (code === 10) return i + 1;
    if (isSpace(code)) {
      if (sentence < 0 && isSentenceEnd(text.charCodeAt(i - 1))) sentence = i + 1;
      if (space < 0) space = i + 1;
    }
  }
  if (sentence > 0) return sentence;
  if (space > 0) return space;
  return limit < text.length && isHighSurrogate(text.charCodeAt(limit - 1)) ? limit - 1 : limit;
};
var wordStartAfter = (text, from, to) => {
  for (let i = from; i < to; i++) if (isSpace(text.charCodeAt(i))) return i + 1;
  return from;
};
var wordEndBefore = (text, from, to) => {
  for (let i = from; i > to; i--) if (isSpace(text.charCodeAt(i - 1))) return i - 1;
  return from;
};
var textWindows = (text, options = {}) => {
  const size = Math.max(2, options.size ?? DEFAULT_WINDOW_SIZE);
  const overlap = Math.max(0, options.overlap ?? DEFAULT_WINDOW_OVERLAP);
  const windows = [];
  let ownStart = 0;
  while (ownStart < text.length) {
    const limit = ownStart + size;
    const ownEnd = limit >= text.length ? text.length : cutPoint(text, ownStart + (size >> 1), limit);
    const viewStart = ownStart === 0 ? 0 : wordStartAfter(text, Math.max(0, ownStart - overlap), ownStart);
    const viewEnd = ownEnd === text.length ? ownEnd : wordEndBefore(text, Math.min(text.length, ownEnd + overlap), ownEnd);
    windows.push({ viewStart, viewEnd, ownStart, ownEnd });
    ownStart = ownEnd;
  }
  return windows;
};
var mergeWindowSpans = (spans, resolve) => {
  const ordered = [...spans].sort((a, b) => a.start - b.start || b.end - a.end);
  const out = [];
  let group = [];
  let groupEnd = -1;
  for (const span of ordered) {
    if (group.length > 0 && span.start >= groupEnd) {
      out.push(...group.length === 1 ? group : resolve(group));
      group = [];
    }
    group.push(span);
    groupEnd = Math.max(group.length === 1 ? span.end : groupEnd, span.end);
  }
  if (group.length > 0) out.push(...group.length === 1 ? group : resolve(group));
  return out;
};

// ../../src/tokeniser/tokeniseText.ts
var detectNames = async (text, session, signal) => {
  if (session.names === "off") return [];
  try {
    const spans = await session.names.detect(text, { signal });
    return spans.filter((s) => s.start >= 0 && s.end <= text.length && s.end > s.start);
  } catch (cause) {
    if (signal?.aborted) throw signal.reason;
    if (session.failOpen) {
      session.markNameModelSkipped();
      return [];
    }
    throw cause instanceof NameModelUnavailable ? cause : new NameModelUnavailable("name model failed; nothing was sent", cause);
  }
};
var detectInView = async (view, session, signal) => {
  const structured = detectStructured(view, session.detectors);
  const names = await detectNames(view, session, signal);
  return resolveOverlaps([...structured, ...names.map((s) => ({ start: s.start, end: s.end, type: "PERSON" }))]);
};
var detectSpans = async (text, session, options = {}) => {
  const checkpoint = options.checkpoint ?? createCheckpoint(options.signal);
  const seen = /* @__PURE__ */ new Map();
  const found = [];
  for (const w of textWindows(text, options.windows)) {
    await checkpoint();
    const view = text.slice(w.viewStart, w.viewEnd);
    const ownStart = w.ownStart - w.viewStart;
    const ownEnd = w.ownEnd - w.viewStart;
    const key = `${ownStart}:${ownEnd}:${view}`;
    let owned = seen.get(key);
    if (owned === void 0) {
      owned = (await detectInView(view, session, options.signal)).filter((s) => s.start >= ownStart && s.start < ownEnd);
      seen.set(key, owned);
    }
    for (const s of owned) found.push({ start: s.start + w.viewStart, end: s.end + w.viewStart, type: s.type });
  }
  return mergeWindowSpans(found, resolveOverlaps);
};
var tokeniseText = async (text, session, options = {}) => {
  session.observe(text);
  if (text.length === 0) return text;
  const spans = await detectSpans(text, session, options);
  let out = "";
  let at = 0;
  for (const span of spans) {
    out += text.slice(at, span.start);
    out += await session.aliasFor(span.type, text.slice(span.start, span.end));
    session.countFired(span.type);
    at = span.end;
  }
  return out + text.slice(at);
};

// ../../src/tokeniser/tokeniseRequest.ts
var InvalidRequestBody = class extends Error {
  _tag = "InvalidRequestBody";
  constructor(message) {
    super(message);
    this.name = "InvalidRequestBody";
  }
};
var isObject = (v) => typeof v === "object" && v !== null && !Array.isArray(v);
var slot = (holder, key) => {
  const value = holder[key];
  return typeof value === "string" ? { text: value, write: (t) => holder[key] = t } : void 0;
};
var contentSlots = (holder, key) => {
  const content = holder[key];
  if (typeof content === "string") return [slot(holder, key)];
  if (!Array.isArray(content)) return [];
  const slots = [];
  for (const part of content) {
    if (!isObject(part)) continue;
    if (part.type === "text") {
      const s = slot(part, "text");
      if (s !== void 0) slots.push(s);
    }
    if (part.type === "tool_result") slots.push(...contentSlots(part, "content"));
  }
  return slots;
};
var messagesSlots = (body) => {
  if (!Array.isArray(body.messages)) throw new InvalidRequestBody("messages must be an array");
  return body.messages.flatMap((m) => isObject(m) ? contentSlots(m, "content") : []);
};
var slotsFor = (route, body) => {
  switch (route) {
    case "chat.completions":
      return messagesSlots(body);
    case "messages":
      return [...contentSlots(body, "system"), ...messagesSlots(body)];
    case "embeddings": {
      const input = body.input;
      if (typeof input === "string") return [slot(body, "input")];
      if (Array.isArray(input)) return input.flatMap((_, i) => slot(input, i) ?? []);
      return [];
    }
  }
};
var tokeniseRequest = async (route, body, opts = {}) => {
  if (!isObject(body)) throw new InvalidRequestBody("request body must be a JSON object");
  const copy = structuredClone(body);
  const session = opts.session ?? createSession(opts);
  const slots = slotsFor(route, copy);
  for (const s of slots) session.observe(s.text);
  const checkpoint = createCheckpoint(opts.signal);
  for (const s of slots) s.write(await tokeniseText(s.text, session, { signal: opts.signal, checkpoint }));
  await checkpoint();
  if (route === "chat.completions" && copy.stream === true) {
    const streamOptions = isObject(copy.stream_options) ? copy.stream_options : {};
    copy.stream_options = { ...streamOptions, include_usage: true };
  }
  const canonical = canonicalize2(copy);
  if (canonical === void 0) throw new InvalidRequestBody("request body cannot be serialised as JSON");
  return {
    body: copy,
    bodyBytes: new TextEncoder().encode(canonical),
    map: session.map,
    detectorsFired: { ...session.detectorsFired },
    nameModelSkipped: session.nameModelSkipped
  };
};

// src/engine.ts
var nameModelOf = (setting, fetchImpl) => {
  if (setting === void 0 || setting === "builtin") return builtinNameModel;
  if (setting === "off") return "off";
  let url;
  try {
    url = new URL(setting);
  } catch {
    throw new ConfigurationError({ status: 0, code: "configuration_error", message: `nameModel must be "builtin", "off" or an http(s) URL, not ${JSON.stringify(setting)}.` });
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ConfigurationError({ status: 0, code: "configuration_error", message: "A name model URL must be http(s)." });
  }
  return httpNameModel({ url: url.toString(), ...fetchImpl ? { fetch: fetchImpl } : {} });
};
var prepareCall = async (engine, route, body) => {
  const secret = route === "embeddings" && engine.stableAliasSecret !== void 0 ? await engine.stableAliasSecret() : void 0;
  let tokenised;
  try {
    tokenised = await tokeniseRequest(route, body, { names: engine.names, ...secret === void 0 ? {} : { stableAliasSecret: secret } });
  } catch (error) {
    if (error instanceof NameModelUnavailable) {
      throw new NameModelUnavailableError({
        status: 0,
        code: "name_model_unavailable",
        message: `The name model is unavailable (${error.message}); nothing was sent (fail-closed). Fix the name model, or use nameModel "builtin" or "off".`,
        cause: error
      });
    }
    if (error instanceof InvalidRequestBody) throw new InvalidRequestError({ status: 0, code: "invalid_request", message: error.message, cause: error });
    throw error;
  }
  const attestation = await buildAttestation({
    route,
    bodyBytes: tokenised.bodyBytes,
    detectorsFired: tokenised.detectorsFired,
    engine: engine.identity,
    keyPair: await engine.deviceKey()
  });
  return {
    bodyBytes: tokenised.bodyBytes,
    headers: { "x-service-engine": engineHeaderValue(engine.identity), "x-service-attestation": encodeAttestationHeader(attestation) },
    map: tokenised.map,
    tokenisedBody: tokenised.body,
    detectorsFired: tokenised.detectorsFired
  };
};

// ../../src/receipts/countersign.ts
var RFC3339_MILLIS_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
var isNonEmptyString2 = (value) => typeof value === "string" && value.length > 0;
var countersignatureShapeProblem = (e) => {
  if (typeof e.alg !== "string") return "alg must be a string";
  for (const member of ["kid", "iss", "provider", "model", "sig"]) {
    if (!isNonEmptyString2(e[member])) return `${member} must be a non-empty string`;
  }
  for (const member of ["jti", "attestation_jti"]) {
    if (typeof e[member] !== "string" || !/^[0-9a-f]{32}$/.test(e[member])) return `${member} must be 32 lowercase hex`;
  }
  if (!Number.isSafeInteger(e.iat) || e.iat < 0) return "iat must be a non-negative integer (Unix seconds)";
  if (typeof e.timestamp !== "string" || !RFC3339_MILLIS_UTC.test(e.timestamp)) return "timestamp must be RFC 3339 UTC with milliseconds";
  for (const member of ["attestation_sha256", "egress_sha256", "hash_upstream_request", "hash_upstream_response"]) {
    if (!isSha256Hex(e[member])) return `${member} must be 64 lowercase hex`;
  }
  if (e.egress_sha256 !== e.hash_upstream_request) return "hash_upstream_request must equal the attested egress_sha256";
  if (e.witness !== "relayed" && e.witness !== "asserted") return 'witness must be "relayed" or "asserted"';
  if (e.receipt_jti !== null && (typeof e.receipt_jti !== "string" || !/^[0-9a-f]{32}$/.test(e.receipt_jti))) {
    return "receipt_jti must be 32 lowercase hex or null";
  }
  return null;
};

// ../../src/receipts/verify.ts
var CHECK_LABELS = [
  "schema valid (OpenReceipt v1)",
  "algorithm allow-listed",
  "freshness (iat, nbf, exp)",
  "signature",
  "chain linkage (seq and prev_hash)"
];
var RECEIPT_MAX_SKEW_SECONDS = 300;
var EXPECTED_ALG = {
  v1: "ecdsa-p256-sha256",
  v2: "ES256",
  "v2-failed": "ES256",
  v3: "ecdsa-p256-sha256",
  "v3-countersignature": "ES256"
};
var CHAIN_ID_PREFIX = {
  v1: "tenant-",
  v2: "receipt-v2-org-",
  "v2-failed": "failed-v2-org-"
};
var isRecord2 = (value) => typeof value === "object" && value !== null && !Array.isArray(value);
var isString = (value) => typeof value === "string";
var isNonEmptyString3 = (value) => typeof value === "string" && value.length > 0;
var isCount = (value) => Number.isSafeInteger(value) && value >= 0;
var isHashOrNull = (value) => value === null || isSha256Hex(value);
var isStringOrNull = (value) => value === null || typeof value === "string";
var RFC3339_MILLIS_UTC2 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
var commonProblem = (e) => {
  if (!isString(e.alg)) return "alg must be a string";
  if (!isNonEmptyString3(e.kid)) return "kid must be a non-empty string";
  if (!isNonEmptyString3(e.iss)) return "iss must be a non-empty string";
  if (!isString(e.jti) || !/^[0-9a-f]{32}$/.test(e.jti)) return "jti must be 32 lowercase hex";
  if (!isCount(e.iat)) return "iat must be a non-negative integer (Unix seconds)";
  if (e.nbf !== void 0 && !Number.isSafeInteger(e.nbf)) return "nbf must be an integer when present";
  if (e.exp !== void 0 && !Number.isSafeInteger(e.exp)) return "exp must be an integer when present";
  const chain = e.chain;
  if (!isRecord2(chain)) return "chain must be an object";
  if (!isNonEmptyString3(chain.chain_id)) return "chain.chain_id must be a non-empty string";
  if (typeof chain.seq !== "number") return "chain.seq must be a number";
  if (!isString(chain.prev_hash)) return "chain.prev_hash must be a string";
  if (!isNonEmptyString3(e.sig)) return "sig must be a non-empty string";
  return null;
};
var v2Problem = (e, failed) => {
  const common = commonProblem(e);
  if (common !== null) return common;
  if (!isNonEmptyString3(e.signature)) return "signature must be a non-empty string";
  if (!isString(e.timestamp) || !RFC3339_MILLIS_UTC2.test(e.timestamp)) {
    return "timestamp must be RFC 3339 UTC with milliseconds";
  }
  if (!isRecord2(e.extensions) || !isString(e.extensions.request_id)) return "extensions.request_id must be a string";
  if (failed) {
    if (!Number.isSafeInteger(e.status) || e.status < 400 || e.status > 599) {
      return "status must be an HTTP error status (400-599)";
    }
    if (!isNonEmptyString3(e.error_code)) return "error_code must be a non-empty string";
    if (e.input_tokens !== void 0 || e.output_tokens !== void 0) return "a failed receipt carries no token counts";
    for (const member of ["request_id", "provider", "model"]) {
      if (!isStringOrNull(e[member])) return `${member} must be a string or null`;
    }
    if (!isHashOrNull(e.hash_upstream_request)) return "hash_upstream_request must be 64 lowercase hex or null";
    if (!isHashOrNull(e.hash_upstream_response)) return "hash_upstream_response must be 64 lowercase hex or null";
    return null;
  }
  if (!isString(e.request_id)) return "request_id must be a string";
  if (!isNonEmptyString3(e.provider)) return "provider must be a non-empty string";
  if (!isNonEmptyString3(e.model)) return "model must be a non-empty string";
  if (!isCount(e.input_tokens)) return "input_tokens must be a non-negative integer";
  if (!isCount(e.output_tokens)) return "output_tokens must be a non-negative integer";
  if (!isSha256Hex(e.hash_upstream_request)) return "hash_upstream_request must be 64 lowercase hex";
  if (!isSha256Hex(e.hash_upstream_response)) return "hash_upstream_response must be 64 lowercase hex";
  if (e.routing_decision !== void 0) {
    const r = e.routing_decision;
    if (!isRecord2(r)) return "routing_decision must be an object when present";
    for (const member of ["from", "to", "chosen_model", "classifier", "strategy"]) {
      if (!isString(r[member])) return `routing_decision.${member} must be a string`;
    }
    if (typeof r.savings_pct !== "number") return "routing_decision.savings_pct must be a number";
    if ("provider_id" in r) return "routing_decision has no provider_id member";
  }
  return null;
};
var v1Problem = (e) => {
  const common = commonProblem(e);
  if (common !== null) return common;
  if (!isNonEmptyString3(e.sub)) return "sub must be a non-empty string";
  const c = e.claims;
  if (!isRecord2(c)) return "claims must be an object";
  for (const member of ["capability", "provider", "model", "tokenisation_mode"]) {
    if (!isNonEmptyString3(c[member])) return `claims.${member} must be a non-empty string`;
  }
  if (!isCount(c.tokens_in)) return "claims.tokens_in must be a non-negative integer";
  if (!isCount(c.tokens_out)) return "claims.tokens_out must be a non-negative integer";
  if (!isSha256Hex(c.hash_upstream_request)) return "claims.hash_upstream_request must be 64 lowercase hex";
  if (!isSha256Hex(c.hash_upstream_response)) return "claims.hash_upstream_response must be 64 lowercase hex";
  if (c.routing_decision !== null) {
    const r = c.routing_decision;
    if (!isRecord2(r)) return "claims.routing_decision must be an object or null";
    for (const member of ["from", "to", "chosen_model", "strategy", "classifier"]) {
      if (!isString(r[member])) return `claims.routing_decision.${member} must be a string`;
    }
  }
  if (!isStringOrNull(c.engine_version)) return "claims.engine_version must be a string or null";
  return null;
};
var classify = (value) => {
  if (!isRecord2(value)) return { problem: "envelope is not a JSON object" };
  let kind;
  let problem;
  if (value.v === 2) {
    if (value.outcome !== void 0 && value.outcome !== "failed") return { problem: 'outcome must be "failed" when present' };
    kind = value.outcome === "failed" ? "v2-failed" : "v2";
    problem = v2Problem(value, kind === "v2-failed");
  } else if (value.v === "v1") {
    kind = "v1";
    problem = v1Problem(value);
  } else if (value.v === "v3") {
    kind = "v3";
    problem = v3EnvelopeShapeProblem(value);
  } else if (value.v === "v3-countersignature") {
    kind = "v3-countersignature";
    problem = countersignatureShapeProblem(value);
  } else {
    return { problem: 'unknown envelope version (v must be "v1", 2, "v3" or "v3-countersignature")' };
  }
  return problem === null ? { kind, envelope: value } : { problem: `${kind} envelope: ${problem}` };
};
var pass = (detail) => ({ ok: true, detail });
var fail = (detail) => ({ ok: false, detail });
var checkFreshness = (e, nowSeconds) => {
  const iat = e.iat;
  if (iat > nowSeconds + RECEIPT_MAX_SKEW_SECONDS) {
    return fail(`iat is ${iat - nowSeconds} s in the future (more than ${RECEIPT_MAX_SKEW_SECONDS} s)`);
  }
  if (typeof e.nbf === "number" && nowSeconds + RECEIPT_MAX_SKEW_SECONDS < e.nbf) return fail("not yet valid (nbf)");
  if (typeof e.exp === "number" && nowSeconds >= e.exp) return fail("expired (exp)");
  return pass("iat not in the future" + (e.nbf !== void 0 || e.exp !== void 0 ? "; nbf/exp respected" : ""));
};
var checkSignature = async (kind, e, options) => {
  if (kind === "v3") {
    return await verifyV3Signature(e) ? pass("verified with the embedded attester_public_key") : fail("does not verify with the embedded attester_public_key");
  }
  if ((kind === "v2" || kind === "v2-failed") && e.signature !== e.sig) return fail("signature and sig differ");
  let signature;
  try {
    signature = base64UrlDecode(e.sig);
  } catch {
    return fail("sig is not base64url without padding");
  }
  if (signature.length !== 64) return fail("sig is not a 64-byte raw r||s signature");
  let key;
  try {
    key = await options.resolveKey(e.kid);
  } catch {
    return fail("verification key lookup failed");
  }
  if (key === void 0) return fail(`no published verification key has kid ${e.kid}`);
  return await verifyRaw(key, signature, signingInput(e)) ? pass(`verified with key ${e.kid}`) : fail(`does not verify with key ${e.kid}`);
};
var checkAttestationBinding = async (e, attestation) => {
  if (attestation === void 0) return pass(`countersigns attestation ${e.attestation_jti}; attestation not supplied, binding not compared`);
  if (!isRecord2(attestation)) return fail("the supplied attestation is not an envelope");
  if (attestation.jti !== e.attestation_jti) return fail(`countersigns attestation ${e.attestation_jti}, not ${String(attestation.jti)}`);
  if (await envelopeHash(attestation) !== e.attestation_sha256) return fail("attestation_sha256 is not the hash of the supplied attestation");
  return pass(`countersigns the supplied attestation ${e.attestation_jti}`);
};
var checkChainLinkage = async (kind, e, options) => {
  const previous = options.previous;
  if (kind === "v3") return pass("not applicable: v3 attestations are client-signed and not chained");
  if (kind === "v3-countersignature") return checkAttestationBinding(e, options.attestation);
  const chain = e.chain;
  const prefix = CHAIN_ID_PREFIX[kind];
  if (!chain.chain_id.startsWith(prefix) || chain.chain_id.length === prefix.length) {
    return fail(`chain_id of a ${kind} receipt must be ${prefix}<id>`);
  }
  if (!Number.isSafeInteger(chain.seq) || chain.seq < 1) return fail("seq must be a positive integer");
  if (!isSha256Hex(chain.prev_hash)) return fail("prev_hash must be 64 lowercase hex");
  if (chain.seq === 1 && chain.prev_hash !== GENESIS_PREV_HASH) return fail("seq 1 must carry the genesis prev_hash");
  if (chain.seq > 1 && chain.prev_hash === GENESIS_PREV_HASH) return fail("only seq 1 may carry the genesis prev_hash");
  if (previous === void 0) return pass(`seq ${chain.seq}; previous receipt not supplied, link not compared`);
  if (!isRecord2(previous) || !isRecord2(previous.chain)) return fail("the supplied previous receipt has no chain");
  const before = previous.chain;
  if (before.chain_id !== chain.chain_id) return fail("previous receipt belongs to another chain");
  if (before.seq !== chain.seq - 1) return fail(`seq ${chain.seq} does not follow previous seq ${String(before.seq)}`);
  if (await envelopeHash(previous) !== chain.prev_hash) return fail("prev_hash is not the hash of the previous receipt");
  return pass(`seq ${chain.seq} follows seq ${chain.seq - 1} and prev_hash matches`);
};
var verifyReceipt = async (envelope, options) => {
  const checks = [];
  let failure;
  const record = (label, outcome) => {
    const check = { label, status: outcome.ok ? "ok" : "fail", detail: outcome.detail };
    checks.push(check);
    if (!outcome.ok) failure = check;
    return outcome.ok;
  };
  const finish = () => {
    for (const label of CHECK_LABELS.slice(checks.length)) {
      checks.push({ label, status: "skipped", detail: "not evaluated: an earlier check failed" });
    }
    return { valid: failure === void 0, reason: failure ? `${failure.label}: ${failure.detail}` : null, checks };
  };
  const classified = classify(envelope);
  if ("problem" in classified) {
    record("schema valid (OpenReceipt v1)", fail(classified.problem));
    return finish();
  }
  const { kind, envelope: e } = classified;
  record("schema valid (OpenReceipt v1)", pass(`${kind} envelope`));
  if (!record("algorithm allow-listed", e.alg === EXPECTED_ALG[kind] ? pass(e.alg) : fail(`${String(e.alg)} is not allowed for ${kind}; expected ${EXPECTED_ALG[kind]}`))) {
    return finish();
  }
  if (!record("freshness (iat, nbf, exp)", checkFreshness(e, options.nowSeconds))) return finish();
  if (!record("signature", await checkSignature(kind, e, options))) return finish();
  try {
    record("chain linkage (seq and prev_hash)", await checkChainLinkage(kind, e, options));
  } catch {
    record("chain linkage (seq and prev_hash)", fail("the previous receipt or the attestation cannot be canonicalised"));
  }
  return finish();
};

// src/receiptCheck.ts
var createReceiptChecker = (loadJwks, initial) => {
  let jwks = initial === void 0 ? void 0 : Promise.resolve(initial);
  const keys = /* @__PURE__ */ new Map();
  const current = () => jwks ??= loadJwks().catch((error) => {
    jwks = void 0;
    throw error;
  });
  const find = async (kid, refetched) => {
    const jwk = (await current()).keys.find((k) => k.kid === kid);
    if (jwk !== void 0) return importPublicJwk(jwk);
    if (refetched) return void 0;
    jwks = void 0;
    return find(kid, true);
  };
  return {
    verify: (envelope) => verifyReceipt(envelope, {
      nowSeconds: Math.floor(Date.now() / 1e3),
      resolveKey: (kid) => {
        let key = keys.get(kid);
        if (key === void 0) {
          key = find(kid, false).catch(() => void 0);
          keys.set(kid, key);
          void key.then((k) => k === void 0 && keys.delete(kid));
        }
        return key;
      }
    })
  };
};

// src/transport.ts
var DEFAULT_RETRY_POLICY = { retries: 2, baseDelayMs: 500, maxDelayMs: 8e3 };
var MAX_RETRY_AFTER_MS = 6e4;
var sleep = (ms, signal) => new Promise((resolve, reject) => {
  if (signal?.aborted) return reject(signal.reason);
  const timer = setTimeout(() => {
    signal?.removeEventListener("abort", onAbort);
    resolve();
  }, ms);
  const onAbort = () => {
    clearTimeout(timer);
    reject(signal.reason);
  };
  signal?.addEventListener("abort", onAbort, { once: true });
});
var isRetryableStatus = (status) => status === 429 || status === 408 || status >= 500 && status !== 501;
var newTraceparent = () => {
  const hex = (bytes) => Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, "0")).join("");
  return `00-${hex(16)}-${hex(8)}-01`;
};
var createTransport = (fetchImpl, policy, defaultTimeoutMs) => ({
  send: async (url, init, options) => {
    const timeoutMs = options.timeoutMs ?? defaultTimeoutMs;
    const attempts = options.retry ? policy.retries + 1 : 1;
    for (let attempt = 1; ; attempt++) {
      const timeout = AbortSignal.timeout(timeoutMs);
      const signal = options.signal === void 0 ? timeout : AbortSignal.any([options.signal, timeout]);
      let response;
      let failure;
      try {
        response = await fetchImpl(url, { ...init, signal, redirect: "error" });
      } catch (error) {
        if (options.signal?.aborted) throw new AbortedError({ status: 0, code: "aborted", message: "The call was aborted by the caller.", cause: error });
        failure = timeout.aborted ? new TimeoutError({ status: 0, code: "timeout", message: `The gateway did not answer within ${timeoutMs} ms.`, cause: error }) : new ConnectionError({ status: 0, code: "connection_error", message: `The gateway could not be reached: ${error.message}`, cause: error });
      }
      if (response !== void 0) {
        if (response.status < 400) return response;
        failure = errorFromAnswer(response.status, response.headers, await response.text().catch(() => ""));
        if (!isRetryableStatus(response.status)) throw failure;
      }
      if (attempt >= attempts) throw failure;
      const backoff = Math.random() * Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
      const retryAfter = failure instanceof RateLimitError ? failure.retryAfterSeconds : retryAfterSeconds(response?.headers.get("retry-after") ?? null);
      const delay = retryAfter === void 0 ? backoff : retryAfter * 1e3;
      if (delay > MAX_RETRY_AFTER_MS) throw failure;
      try {
        await sleep(delay, options.signal);
      } catch (error) {
        throw new AbortedError({ status: 0, code: "aborted", message: "The call was aborted by the caller.", cause: error });
      }
    }
  }
});

// src/rest.ts
var RestApi = class {
  #gatewayUrl;
  #transport;
  #apiKey;
  #portalToken;
  #verify;
  constructor(input) {
    this.#gatewayUrl = input.gatewayUrl;
    this.#transport = input.transport;
    this.#apiKey = input.apiKey;
    this.#portalToken = input.portalToken;
    this.#verify = input.verify;
  }
  async #call(method, path, auth, body, options = {}) {
    const headers = { accept: "application/json", traceparent: options.traceparent ?? newTraceparent() };
    if (auth === "key") headers.authorization = `Bearer ${this.#apiKey()}`;
    if (auth === "portal") {
      if (this.#portalToken === void 0) {
        throw new ConfigurationError({ status: 0, code: "configuration_error", message: `${method} ${path} needs a portal token: give portalToken (spt_...) to the client.` });
      }
      headers.authorization = `Bearer ${this.#portalToken}`;
    }
    const write = method !== "GET";
    if (body !== void 0) headers["content-type"] = "application/json";
    if (write) headers["idempotency-key"] = options.idempotencyKey ?? crypto.randomUUID();
    const response = await this.#transport.send(
      `${this.#gatewayUrl}${path}`,
      { method, headers, ...body === void 0 ? {} : { body: JSON.stringify(body) } },
      { retry: true, signal: options.signal, timeoutMs: options.timeoutMs }
    );
    const text = await response.text();
    return text === "" ? {} : JSON.parse(text);
  }
  keys = {
    create: (input = {}, o) => this.#call("POST", "/api/keys", "portal", input, o),
    list: (query = {}, o) => this.#call("GET", `/api/v1/keys${queryString(query)}`, "portal", void 0, o),
    update: (id, changes, o) => this.#call("PATCH", `/api/keys/${encodeURIComponent(id)}`, "portal", changes, o),
    rotate: (id, o) => this.#call("POST", `/api/keys/${encodeURIComponent(id)}/rotate`, "portal", {}, o),
    revoke: (id, o) => this.#call("POST", `/api/keys/${encodeURIComponent(id)}/revoke`, "portal", {}, o),
    /** The scopes and model allowlist of a key, as the portal lists it. */
    scopes: async (id, o) => {
      const { keys } = await this.#call("GET", "/api/v1/keys", "portal", void 0, o);
      const key = keys.find((k) => k.id === id);
      return key === void 0 ? void 0 : { permissions: key.permissions, models: key.models };
    }
  };
  receipts = {
    /** Offline, against the gateway's JWKS (fetched once, again on an unknown kid). */
    verify: (headerValueOrEnvelope) => this.#verify(decodeReceipt(headerValueOrEnvelope)),
    /** Online: the gateway's own verify route. */
    verifyOnline: (headerValueOrEnvelope, o) => this.#call("POST", "/api/v1/receipts/verify", "none", decodeReceipt(headerValueOrEnvelope), o),
    list: (query = {}, o) => this.#call("GET", `/api/v1/receipts${queryString(query)}`, "portal", void 0, o),
    get: (jti, o) => this.#call("GET", `/api/v1/receipts/${encodeURIComponent(jti)}`, "portal", void 0, o),
    countersign: (input, o) => this.#call("POST", "/api/v1/receipts/countersign", "key", input, o),
    signedTreeHead: (o) => this.#call("GET", "/api/v1/transparency/sth", "none", void 0, o),
    inclusionProof: (jti, o) => this.#call("GET", `/api/v1/transparency/proof/${encodeURIComponent(jti)}`, "none", void 0, o)
  };
  webhooks = {
    endpoints: {
      create: (input, o) => this.#call("POST", "/api/v1/webhooks/endpoints", "portal", input, o),
      list: (o) => this.#call("GET", "/api/v1/webhooks/endpoints", "portal", void 0, o),
      get: (id, o) => this.#call("GET", `/api/v1/webhooks/endpoints/${id}`, "portal", void 0, o),
      update: (id, changes, o) => this.#call("PATCH", `/api/v1/webhooks/endpoints/${id}`, "portal", changes, o),
      delete: (id, o) => this.#call("DELETE", `/api/v1/webhooks/endpoints/${id}`, "portal", void 0, o),
      rotateSecret: (id, o) => this.#call("POST", `/api/v1/webhooks/endpoints/${id}/rotate`, "portal", {}, o),
      test: (id, o) => this.#call("POST", `/api/v1/webhooks/endpoints/${id}/test`, "portal", {}, o),
      resume: (id, o) => this.#call("POST", `/api/v1/webhooks/endpoints/${id}/resume`, "portal", {}, o)
    },
    deliveries: {
      list: (query = {}, o) => this.#call("GET", `/api/v1/webhooks/deliveries${queryString(query)}`, "portal", void 0, o),
      get: (id, o) => this.#call("GET", `/api/v1/webhooks/deliveries/${id}`, "portal", void 0, o),
      replay: (id, o) => this.#call("POST", `/api/v1/webhooks/deliveries/${id}/replay`, "portal", {}, o)
    }
  };
  billing = {
    balance: (o) => this.#call("GET", "/api/v1/billing/balance", "portal", void 0, o),
    topUp: (input, o) => this.#call("POST", "/api/v1/billing/topup", "portal", input, o),
    redeemLicence: (input, o) => this.#call("POST", "/api/v1/billing/redeem-license", "portal", input, o),
    ledger: (query = {}, o) => this.#call("GET", `/api/v1/billing/ledger${queryString(query)}`, "portal", void 0, o),
    usage: (query = {}, o) => this.#call("GET", `/api/v1/billing/usage${queryString(query)}`, "portal", void 0, o)
  };
  /** A free-tier key (shown once). No auth. */
  selfServiceKey = (input = {}, o) => this.#call("POST", "/api/v1/self-service/key", "none", input, o);
  /** An anonymous demo key: $2, 24 hours, relay only, no receipts (shown once). No auth. */
  demoKey = (o) => this.#call("POST", "/api/v1/demo/key", "none", {}, o);
};
var queryString = (query) => {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== void 0) params.set(key, String(value));
  const text = params.toString();
  return text === "" ? "" : `?${text}`;
};
var decodeReceipt = (value) => {
  if (typeof value !== "string") return value;
  const text = value.trim();
  if (text.startsWith("{")) return JSON.parse(text);
  return JSON.parse(new TextDecoder().decode(Uint8Array.from(atob(text), (c) => c.charCodeAt(0))));
};

// src/sseDetokeniser.ts
var jsonEscapedMap = (map) => new Map([...map].map(([alias, original]) => [alias, JSON.stringify(original).slice(1, -1)]));
var isRecord3 = (v) => typeof v === "object" && v !== null && !Array.isArray(v);
var serialiseEvent = (e) => `${e.event === void 0 ? "" : `event: ${e.event}
`}data: ${e.data}

`;
var createSseDetokeniser = (route, map) => {
  const escaped = jsonEscapedMap(map);
  const fields = /* @__PURE__ */ new Map();
  const field = (key, json) => {
    let d = fields.get(key);
    if (d === void 0) fields.set(key, d = createStreamingDetokeniser(json ? escaped : map));
    return d;
  };
  const release = (key) => {
    const d = fields.get(key);
    if (d === void 0) return "";
    fields.delete(key);
    return d.flush();
  };
  let buffer = "";
  let receipt;
  let completed = false;
  let lastChunkId;
  let lastModel;
  const event = (name, json) => ({ event: name, data: JSON.stringify(json), json });
  const releaseAllChat = () => {
    const choices = [];
    for (const key of [...fields.keys()]) {
      const text = release(key);
      if (text === "") continue;
      const [, kind, index, tool] = /^(c|t)(\d+)(?:\.(\d+))?$/.exec(key) ?? [];
      const delta = kind === "c" ? { content: text } : { tool_calls: [{ index: Number(tool), function: { arguments: text } }] };
      choices.push({ index: Number(index), delta, finish_reason: null });
    }
    return choices.length === 0 ? [] : [event(void 0, { id: lastChunkId, object: "chat.completion.chunk", model: lastModel, choices })];
  };
  const chatFrame = (chunk) => {
    lastChunkId = chunk.id ?? lastChunkId;
    lastModel = chunk.model ?? lastModel;
    for (const choice of Array.isArray(chunk.choices) ? chunk.choices : []) {
      if (!isRecord3(choice)) continue;
      const i = choice.index ?? 0;
      const delta = isRecord3(choice.delta) ? choice.delta : void 0;
      if (delta !== void 0 && typeof delta.content === "string") delta.content = field(`c${i}`, false).push(delta.content);
      for (const call of Array.isArray(delta?.tool_calls) ? delta.tool_calls : []) {
        if (isRecord3(call) && isRecord3(call.function) && typeof call.function.arguments === "string") {
          call.function.arguments = field(`t${i}.${call.index ?? 0}`, true).push(call.function.arguments);
        }
      }
      if (choice.finish_reason !== null && choice.finish_reason !== void 0) {
        const rest = release(`c${i}`);
        if (rest !== "") choice.delta = { ...delta ?? {}, content: `${typeof delta?.content === "string" ? delta.content : ""}${rest}` };
        for (const key of [...fields.keys()].filter((k) => k.startsWith(`t${i}.`))) {
          const args = release(key);
          if (args === "") continue;
          const calls = Array.isArray(choice.delta?.tool_calls) ? choice.delta.tool_calls : [];
          choice.delta = { ...choice.delta ?? {}, tool_calls: [...calls, { index: Number(key.split(".")[1]), function: { arguments: args } }] };
        }
      }
      if (isRecord3(choice.message) && typeof choice.message.content === "string") choice.message.content = field(`m${i}`, false).push(choice.message.content) + release(`m${i}`);
    }
    return [event(void 0, chunk)];
  };
  const messagesFrame = (name, json) => {
    const index = json.index ?? 0;
    if (json.type === "content_block_delta" && isRecord3(json.delta)) {
      if (json.delta.type === "text_delta" && typeof json.delta.text === "string") json.delta.text = field(`b${index}`, false).push(json.delta.text);
      if (json.delta.type === "input_json_delta" && typeof json.delta.partial_json === "string") {
        json.delta.partial_json = field(`j${index}`, true).push(json.delta.partial_json);
      }
      return [event(name, json)];
    }
    if (json.type === "content_block_stop") {
      const out = [];
      const text = release(`b${index}`);
      if (text !== "") out.push(event("content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text } }));
      const partial = release(`j${index}`);
      if (partial !== "") out.push(event("content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: partial } }));
      return [...out, event(name, json)];
    }
    if (json.type === "message_stop") completed = true;
    return [event(name, json)];
  };
  const handle = (raw) => {
    let name;
    const data = [];
    const other = [];
    for (const line of raw.split(/\r?\n/)) {
      if (line.startsWith("event:")) name = line.slice(6).trim();
      else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      else if (line !== "") other.push(line);
    }
    if (data.length === 0) return [];
    const text = data.join("\n");
    if (name === "receipt-v2") {
      try {
        receipt = JSON.parse(text);
      } catch {
        throw new StreamError({ status: 200, code: "stream_error", message: "The receipt-v2 trailer is not JSON." });
      }
      return [{ event: name, data: text, json: receipt }];
    }
    if (text === "[DONE]") {
      completed = true;
      return [...route === "chat.completions" ? releaseAllChat() : [], { event: name, data: text, json: void 0 }];
    }
    let json;
    try {
      json = JSON.parse(text);
    } catch {
      throw new StreamError({ status: 200, code: "stream_error", message: "The gateway sent a stream frame that is not JSON." });
    }
    if (!isRecord3(json)) return [{ event: name, data: text, json }];
    if (name === "error" || json.type === "error") return [{ event: name, data: text, json }];
    return route === "chat.completions" ? chatFrame(json) : messagesFrame(name, json);
  };
  return {
    push: (text) => {
      buffer += text;
      const out = [];
      for (; ; ) {
        const match = /\r?\n\r?\n/.exec(buffer);
        if (match === null) break;
        const raw = buffer.slice(0, match.index);
        buffer = buffer.slice(match.index + match[0].length);
        out.push(...handle(raw));
      }
      return out;
    },
    end: () => {
      if (buffer.trim() !== "") {
        buffer = "";
        throw new StreamError({ status: 200, code: "stream_error", message: "The stream ended in the middle of a frame." });
      }
      if (route === "chat.completions") return releaseAllChat();
      return [...fields.keys()].flatMap((key) => {
        const text = release(key);
        const index = Number(key.slice(1));
        if (text === "") return [];
        const delta = key.startsWith("b") ? { type: "text_delta", text } : { type: "input_json_delta", partial_json: text };
        return [event("content_block_delta", { type: "content_block_delta", index, delta })];
      });
    },
    receipt: () => receipt,
    completed: () => completed
  };
};

// src/RelayClient.ts
var decodeHeader = (value) => {
  if (value === null) return void 0;
  try {
    return JSON.parse(new TextDecoder().decode(Uint8Array.from(atob(value), (c) => c.charCodeAt(0))));
  } catch {
    return void 0;
  }
};
var ROUTE_PATHS = {
  "chat.completions": "/api/v1/chat/completions",
  messages: "/api/v1/messages",
  embeddings: "/api/v1/embeddings"
};
var routeOfPath = (pathname) => {
  if (pathname.endsWith("/chat/completions")) return "chat.completions";
  if (pathname.endsWith("/messages")) return "messages";
  if (pathname.endsWith("/embeddings")) return "embeddings";
  if (pathname.endsWith("/models")) return "models";
  return void 0;
};
var FORWARDED_HEADERS = ["idempotency-key", "traceparent", "tracestate", "anthropic-version", "anthropic-beta"];
var RelayClientCore = class {
  gatewayUrl;
  rest;
  /**
   * A `fetch` for the official `openai` and `@anthropic-ai/sdk` packages (their `fetch` option): their requests are
   * tokenised and attested here, sent to this client's gateway with this client's key, and their answers (streams
   * included) come back with the originals restored. Their own API key and base URL are not used.
   */
  fetch;
  chat;
  messages;
  embeddings;
  models;
  #apiKey;
  #engine;
  #transport;
  #fetch;
  #receipts;
  #identity;
  constructor(options, platform) {
    try {
      this.gatewayUrl = parseGatewayUrl(options.gatewayUrl);
    } catch (error) {
      throw new ConfigurationError({ status: 0, code: "configuration_error", message: error.message.replaceAll("GATEWAY_URL", "gatewayUrl"), cause: error });
    }
    if (options.apiKey !== void 0 && options.apiKeyFile !== void 0) {
      throw new ConfigurationError({ status: 0, code: "configuration_error", message: "Give apiKey or apiKeyFile, not both." });
    }
    const fileKey = options.apiKeyFile === void 0 ? void 0 : platform.readApiKeyFile(options.apiKeyFile);
    const apiKey = options.apiKey ?? fileKey;
    if (apiKey !== void 0 && !/^svc_[a-z2-7]+$/.test(apiKey)) {
      throw new ConfigurationError({ status: 0, code: "configuration_error", message: "apiKey is not a gateway key (svc_...)." });
    }
    this.#apiKey = () => {
      if (apiKey === void 0) throw new ConfigurationError({ status: 0, code: "configuration_error", message: "This call needs a gateway key: give apiKey or apiKeyFile." });
      return apiKey;
    };
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.#transport = createTransport(this.#fetch, { ...DEFAULT_RETRY_POLICY, retries: options.retries ?? DEFAULT_RETRY_POLICY.retries }, options.timeoutMs ?? 6e4);
    const stable = options.stableEmbeddingAliases ?? true;
    let deviceKey = options.deviceKey === void 0 ? void 0 : Promise.resolve(options.deviceKey);
    let aliasSecret;
    this.#engine = {
      identity: options.engine ?? platform.engine(),
      deviceKey: () => deviceKey ??= platform.deviceKey(),
      names: nameModelOf(options.nameModel, options.fetch),
      stableAliasSecret: stable ? () => aliasSecret ??= platform.stableAliasSecret() : void 0
    };
    this.#receipts = createReceiptChecker(() => this.#probe());
    this.rest = new RestApi({
      gatewayUrl: this.gatewayUrl,
      transport: this.#transport,
      apiKey: () => this.#apiKey(),
      portalToken: options.portalToken,
      verify: (envelope) => this.#receipts.verify(envelope)
    });
    const create = (route) => ((body, callOptions) => this.#relay(route, body, callOptions ?? {}));
    this.chat = { completions: { create: create("chat.completions") } };
    this.messages = { create: create("messages") };
    this.embeddings = { create: (body, callOptions) => this.#relay("embeddings", body, callOptions ?? {}) };
    this.models = {
      list: async (callOptions) => {
        await this.#ready();
        const res = await this.#transport.send(`${this.gatewayUrl}/api/v1/models`, { headers: this.#headers({}, callOptions ?? {}) }, { retry: true, ...callOptions });
        return res.json();
      }
    };
    this.fetch = (input, init) => this.#officialSdkFetch(new Request(input, init));
  }
  /** The gateway identity probe, once per client (again after a failure): its JWKS also verifies receipts. */
  #probe() {
    return (async () => {
      try {
        await probeGateway(this.gatewayUrl, { fetch: this.#fetch });
      } catch (error) {
        const message = error instanceof ProxyStartError ? error.message.replaceAll("GATEWAY_URL", "gatewayUrl") : String(error);
        throw new GatewayIdentityError({ status: 0, code: "gateway_identity_failed", message, cause: error });
      }
      const res = await this.#fetch(`${this.gatewayUrl}${GATEWAY_IDENTITY_PROBE_PATH}`, { headers: { accept: "application/json" }, redirect: "error" });
      return await res.json();
    })();
  }
  #ready() {
    return this.#identity ??= this.#probe().catch((error) => {
      this.#identity = void 0;
      throw error;
    });
  }
  #headers(extra, options) {
    return {
      authorization: `Bearer ${this.#apiKey()}`,
      accept: "application/json",
      traceparent: options.traceparent ?? newTraceparent(),
      ...extra
    };
  }
  async #send(route, prepared, options, stream) {
    await this.#ready();
    const headers = this.#headers(
      {
        "content-type": "application/json",
        accept: stream ? "text/event-stream" : "application/json",
        "idempotency-key": options.idempotencyKey ?? crypto.randomUUID(),
        ...prepared.headers
      },
      options
    );
    return this.#transport.send(`${this.gatewayUrl}${ROUTE_PATHS[route]}`, { method: "POST", headers, body: prepared.bodyBytes }, {
      retry: true,
      signal: options.signal,
      // A stream's time limit covers its first byte; the stream itself may run longer.
      timeoutMs: options.timeoutMs
    });
  }
  async #verify(receipt) {
    if (receipt === void 0) return { receiptVerified: void 0, receiptVerification: void 0 };
    const verification = await this.#receipts.verify(receipt);
    return { receiptVerified: verification.valid, receiptVerification: verification };
  }
  async #relay(route, body, options) {
    const prepared = await prepareCall(this.#engine, route, body);
    const stream = route !== "embeddings" && body.stream === true;
    const response = await this.#send(route, prepared, options, stream);
    const requestId = response.headers.get("x-request-id") ?? void 0;
    if (stream) return this.#stream(route, prepared, response, requestId);
    const answer = JSON.parse(detokeniseResponseText(await response.text(), prepared.map));
    const receipt = decodeHeader(response.headers.get("x-service-receipt-v2"));
    const meta = {
      requestId,
      receipt,
      ...await this.#verify(receipt),
      countersignature: decodeHeader(response.headers.get("x-service-receipt-v3")),
      tokenisedRequest: prepared.tokenisedBody
    };
    for (const [key, value] of Object.entries(meta)) Object.defineProperty(answer, key, { value, enumerable: false });
    return answer;
  }
  #stream(route, prepared, response, requestId) {
    const sse = createSseDetokeniser(route, prepared.map);
    const reader = response.body.getReader();
    const verify = (receipt) => this.#verify(receipt);
    const result = {
      requestId,
      tokenisedRequest: prepared.tokenisedBody,
      receipt: void 0,
      receiptVerified: void 0,
      receiptVerification: void 0,
      abort: () => void reader.cancel().catch(() => {
      }),
      async *[Symbol.asyncIterator]() {
        const decoder = new TextDecoder();
        const emit = function* (events) {
          for (const e of events) if (e.event !== "receipt-v2" && e.data !== "[DONE]" && e.json !== void 0) yield e.json;
        };
        try {
          for (; ; ) {
            const { done, value } = await reader.read();
            if (done) break;
            yield* emit(sse.push(decoder.decode(value, { stream: true })));
          }
          yield* emit(sse.push(decoder.decode()));
          yield* emit(sse.end());
        } catch (error) {
          if (error instanceof RelayError) throw error;
          throw new StreamError({ status: response.status, code: "stream_error", message: `The stream broke: ${error.message}`, requestId, cause: error });
        } finally {
          reader.releaseLock();
        }
        if (!sse.completed()) {
          throw new StreamError({ status: response.status, code: "stream_error", message: "The stream ended before its end marker (the upstream cut it); the answer is incomplete.", requestId });
        }
        const receipt = sse.receipt();
        const checked = await verify(receipt);
        result.receipt = receipt;
        result.receiptVerified = checked.receiptVerified;
        result.receiptVerification = checked.receiptVerification;
      }
    };
    return result;
  }
  /** `client.fetch`: an official SDK's request, made private. */
  async #officialSdkFetch(request) {
    const route = routeOfPath(new URL(request.url).pathname);
    const forwarded = {};
    for (const name of FORWARDED_HEADERS) {
      const value = request.headers.get(name);
      if (value !== null) forwarded[name] = value;
    }
    try {
      if (route === "models") {
        await this.#ready();
        const res = await this.#fetch(`${this.gatewayUrl}/api/v1/models`, { headers: this.#headers(forwarded, {}), signal: request.signal, redirect: "error" });
        return new Response(res.body, { status: res.status, headers: res.headers });
      }
      if (route === void 0 || request.method !== "POST") {
        return errorResponse(route === "messages", 404, "not_found", `client.fetch relays chat completions, messages, embeddings and the model list; not ${request.method} ${new URL(request.url).pathname}.`);
      }
      let body;
      try {
        body = await request.json();
      } catch {
        return errorResponse(route === "messages", 400, "invalid_request", "The request body is not JSON.");
      }
      const prepared = await prepareCall(this.#engine, route, body);
      await this.#ready();
      const stream = route !== "embeddings" && body.stream === true;
      const response = await this.#fetch(`${this.gatewayUrl}${ROUTE_PATHS[route]}`, {
        method: "POST",
        headers: this.#headers({ "content-type": "application/json", accept: stream ? "text/event-stream" : "application/json", ...forwarded, ...prepared.headers }, {}),
        body: prepared.bodyBytes,
        signal: request.signal,
        redirect: "error"
      });
      const headers = new Headers(response.headers);
      headers.delete("content-length");
      headers.delete("content-encoding");
      if (!response.ok) {
        const error = errorFromAnswer(response.status, response.headers, await response.text());
        return errorResponse(route === "messages", response.status, error.code, error.message, headers);
      }
      if (!stream) return new Response(detokeniseResponseText(await response.text(), prepared.map), { status: response.status, headers });
      return new Response(detokenisedSse(route, prepared, response.body), { status: response.status, headers });
    } catch (error) {
      if (error instanceof RelayError) {
        return errorResponse(route === "messages", error.status === 0 ? statusOfLocalError(error) : error.status, error.code, error.message);
      }
      throw error;
    }
  }
};
var statusOfLocalError = (error) => {
  switch (error.code) {
    case "name_model_unavailable":
      return 503;
    case "connection_error":
    case "gateway_identity_failed":
      return 502;
    case "timeout":
      return 504;
    default:
      return 400;
  }
};
var errorResponse = (anthropic, status, code, message, headers = new Headers()) => {
  headers.set("content-type", "application/json");
  const body = anthropic ? { type: "error", error: { type: code, message } } : { error: { code, message, type: code } };
  return new Response(JSON.stringify(body), { status, headers });
};
var detokenisedSse = (route, prepared, upstream) => {
  const sse = createSseDetokeniser(route, prepared.map);
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  const encode = (events) => encoder.encode(events.map(serialiseEvent).join(""));
  return upstream.pipeThrough(
    new TransformStream({
      transform: (chunk, controller) => {
        const out = sse.push(decoder.decode(chunk, { stream: true }));
        if (out.length > 0) controller.enqueue(encode(out));
      },
      flush: (controller) => {
        const out = [...sse.push(decoder.decode()), ...sse.end()];
        if (out.length > 0) controller.enqueue(encode(out));
      }
    })
  );
};

// src/browser.ts
var RelayClient = class extends RelayClientCore {
  constructor(options) {
    super(options, browserPlatform);
  }
};
export {
  AbortedError,
  AuthenticationError,
  ConfigurationError,
  ConflictError,
  ConnectionError,
  GatewayIdentityError,
  InsufficientBalanceError,
  InvalidRequestError,
  NameModelUnavailableError,
  NotFoundError,
  PayloadTooLargeError,
  PermissionDeniedError,
  PretokenisationRequiredError,
  RateLimitError,
  RelayClient,
  RelayError,
  ServerError,
  StreamError,
  TimeoutError,
  decodeReceipt,
  errorFromAnswer,
  retryAfterSeconds
};
//# sourceMappingURL=browser.js.map
