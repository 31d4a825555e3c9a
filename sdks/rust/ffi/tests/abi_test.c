/* The C ABI from C: results, error codes and error JSON for NULL, non-JSON and invalid UTF-8 arguments, the
 * streaming detokeniser handle, verification verdicts, a deterministic attestation equal to the vector, and a
 * panic contained by the boundary. Built and run by sdks/rust/ci.sh; prints "N passed, M failed". */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "privacy_relay.h"

static int passed = 0, failed = 0;

#define CHECK(cond, what)                                                      \
  do {                                                                         \
    if (cond) {                                                                \
      passed++;                                                                \
    } else {                                                                   \
      failed++;                                                                \
      fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, what);           \
    }                                                                          \
  } while (0)

static int contains(const char *s, const char *needle) { return s != NULL && strstr(s, needle) != NULL; }

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  if (fread(buf, 1, (size_t)n, f) != (size_t)n) { fclose(f); free(buf); return NULL; }
  buf[n] = 0;
  fclose(f);
  return buf;
}

static const char *CHAT =
    "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"Mail jane.doe@example.com or call +44 20 7946 0958\"}]}";
static const char *SECRET_OPTIONS =
    "{\"names\":\"off\",\"secret_hex\":\"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\"}";
static const char *DEVICE_JWK =
    "{\"kty\":\"EC\",\"crv\":\"P-256\",\"x\":\"PeeHER9osull1O4wGXx0urO5XBFe0qtqZawgtmsAM1Y\","
    "\"y\":\"k1bE9ZRt7jgIrcfjw9UDRsooNcOQpaJPrCxSBhZ_epE\",\"d\":\"00MuKacJIuJODwfhGHAfh12GUqkQ5jZJZx_y-FqzILE\"}";

int main(int argc, char **argv) {
  const char *vectors = argc > 1 ? argv[1] : "../vectors";
  char *out = NULL;
  int rc;

  CHECK(pr_abi_version() == PR_ABI_VERSION, "abi version");
  rc = pr_engine_info(&out);
  CHECK(rc == PR_OK && contains(out, "\"id\":\"relay-rs\"") && contains(out, "\"sha256\":\""), "engine info");
  pr_string_free(out);

  /* Tokenise a request: the body text carries aliases only; the map keeps the originals. */
  rc = pr_tokenise_request("chat.completions", CHAT, SECRET_OPTIONS, &out);
  CHECK(rc == PR_OK, "tokenise ok");
  CHECK(contains(out, "\"body_text\":\"{\\\"messages\\\":[{\\\"content\\\":\\\"Mail <EMAIL_1_"), "body_text is JCS with an alias");
  CHECK(contains(out, "[\"<PHONE_1_") && contains(out, "\"+44 20 7946 0958\"]"), "map holds the phone");
  CHECK(contains(out, "\"detectors_fired\":{\"EMAIL\":1,\"PHONE\":1}"), "detectors fired");
  pr_string_free(out);
  rc = pr_tokenise_request("chat.completions", CHAT, SECRET_OPTIONS, &out);
  char *again = NULL;
  pr_tokenise_request("chat.completions", CHAT, SECRET_OPTIONS, &again);
  CHECK(out && again && strcmp(out, again) == 0, "same secret, same bytes");
  pr_string_free(out);
  pr_string_free(again);
  rc = pr_tokenise_request("chat.completions", CHAT, NULL, &out);
  CHECK(rc == PR_OK, "NULL options are no options");
  pr_string_free(out);

  /* NULL arguments. */
  rc = pr_tokenise_request(NULL, CHAT, NULL, &out);
  CHECK(rc == PR_E_NULL_ARGUMENT && contains(out, "\"code\":\"null_argument\"") && contains(out, "route is NULL"), "NULL route");
  pr_string_free(out);
  rc = pr_tokenise_request("chat.completions", NULL, NULL, &out);
  CHECK(rc == PR_E_NULL_ARGUMENT && contains(out, "body_json is NULL"), "NULL body");
  pr_string_free(out);
  rc = pr_tokenise_request("chat.completions", CHAT, NULL, NULL);
  CHECK(rc == PR_E_NULL_ARGUMENT, "NULL out");
  char *last = pr_last_error();
  CHECK(contains(last, "null_argument"), "last error after NULL out");
  pr_string_free(last);
  rc = pr_engine_info(&out);
  pr_string_free(out);
  last = pr_last_error();
  CHECK(last == NULL, "no last error after a success");

  /* Non-JSON and invalid UTF-8. */
  rc = pr_tokenise_request("chat.completions", "{not json", NULL, &out);
  CHECK(rc == PR_E_INVALID_JSON && contains(out, "\"code\":\"invalid_json\"") && contains(out, "body_json is not JSON text"), "non-JSON body");
  pr_string_free(out);
  rc = pr_tokenise_request("chat.completions", CHAT, "[1,2]", &out);
  CHECK(rc == PR_E_INVALID_ARGUMENT && contains(out, "options_json must be a JSON object"), "options not an object");
  pr_string_free(out);
  rc = pr_tokenise_request("chat.completions", CHAT, "{\"nmaes\":\"off\"}", &out);
  CHECK(rc == PR_E_INVALID_ARGUMENT && contains(out, "unknown option nmaes"), "unknown option");
  pr_string_free(out);
  const char bad_utf8[] = {'h', 'i', ' ', (char)0xff, (char)0xfe, 0};
  rc = pr_tokenise_text(bad_utf8, NULL, &out);
  CHECK(rc == PR_E_INVALID_UTF8 && contains(out, "\"code\":\"invalid_utf8\"") && contains(out, "offset 3"), "invalid UTF-8 text");
  pr_string_free(out);
  const char cesu_surrogate[] = {'"', (char)0xed, (char)0xa0, (char)0x80, '"', 0}; /* a UTF-8-encoded lone surrogate */
  rc = pr_canonicalize(cesu_surrogate, &out);
  CHECK(rc == PR_E_INVALID_UTF8, "lone surrogate bytes are invalid UTF-8");
  pr_string_free(out);
  rc = pr_tokenise_request("chat.completions", "{\"messages\":[{\"role\":\"user\",\"content\":\"\\ud800\"}]}", NULL, &out);
  CHECK(rc == PR_E_INVALID_JSON && contains(out, "surrogate"), "lone surrogate escape is refused");
  pr_string_free(out);

  /* Routes and bodies. */
  rc = pr_tokenise_request("completions", CHAT, NULL, &out);
  CHECK(rc == PR_E_INVALID_ARGUMENT && contains(out, "unknown route"), "unknown route");
  pr_string_free(out);
  rc = pr_tokenise_request("chat.completions", "[1]", NULL, &out);
  CHECK(rc == PR_E_INVALID_REQUEST && contains(out, "request body must be a JSON object"), "body not an object");
  pr_string_free(out);
  rc = pr_tokenise_request("messages", "{\"messages\":3}", NULL, &out);
  CHECK(rc == PR_E_INVALID_REQUEST && contains(out, "messages must be an array"), "messages not an array");
  pr_string_free(out);

  /* Spans: UTF-16 and byte offsets. */
  rc = pr_detect_spans("\xc3\xa9 jane.doe@example.com", "{\"names\":\"off\"}", &out);
  CHECK(rc == PR_OK && contains(out, "\"start\":2,\"end\":22,\"type\":\"EMAIL\"") && contains(out, "\"byte_start\":3"), "spans offsets");
  pr_string_free(out);

  /* Streaming detokeniser. */
  pr_detokeniser *d = NULL;
  rc = pr_detokeniser_new("[[\"<EMAIL_1_ynha>\",\"jane.doe@example.com\"]]", &d, &out);
  CHECK(rc == PR_OK && d != NULL, "detokeniser new");
  pr_string_free(out);
  rc = pr_detokeniser_push(d, "Wrote to <EMA", &out);
  CHECK(rc == PR_OK && out && strcmp(out, "Wrote to ") == 0, "push holds back the alias prefix");
  pr_string_free(out);
  rc = pr_detokeniser_push(d, "IL_1_ynha> today <", &out);
  CHECK(rc == PR_OK && out && strcmp(out, "jane.doe@example.com today ") == 0, "push restores across chunks");
  pr_string_free(out);
  rc = pr_detokeniser_finish(d, &out);
  CHECK(rc == PR_OK && out && strcmp(out, "<") == 0, "finish releases the rest");
  pr_string_free(out);
  rc = pr_detokeniser_push(NULL, "x", &out);
  CHECK(rc == PR_E_NULL_ARGUMENT, "push on NULL handle");
  pr_string_free(out);
  pr_detokeniser_free(d);
  pr_detokeniser_free(NULL);
  rc = pr_detokeniser_new("{\"a\":1}", &d, &out);
  CHECK(rc == PR_E_INVALID_ARGUMENT && d == NULL, "map values must be strings");
  pr_string_free(out);
  rc = pr_detokenise("to <EMAIL_1_ynha>.", "{\"<EMAIL_1_ynha>\":\"a@b.example\"}", &out);
  CHECK(rc == PR_OK && out && strcmp(out, "to a@b.example.") == 0, "detokenise");
  pr_string_free(out);

  /* Verification: verdicts are results. */
  rc = pr_verify_receipt("not a receipt", "{\"keys\":[]}", "{\"now_seconds\":0}", &out);
  CHECK(rc == PR_OK && contains(out, "\"valid\":false") && contains(out, "neither JSON text nor standard padded base64"), "undecodable receipt");
  pr_string_free(out);
  rc = pr_verify_receipt("e30=", "{\"nope\":1}", NULL, &out);
  CHECK(rc == PR_E_JWKS && contains(out, "jwks_invalid"), "not a JWKS");
  pr_string_free(out);
  rc = pr_verify_webhook((const uint8_t *)"{}", 2, "{}", "whsec", NULL, &out);
  CHECK(rc == PR_OK && contains(out, "\"ok\":false") && contains(out, "missing_headers"), "webhook without headers");
  pr_string_free(out);
  rc = pr_verify_webhook(NULL, 4, "{}", "whsec", NULL, &out);
  CHECK(rc == PR_E_NULL_ARGUMENT, "webhook NULL body with a length");
  pr_string_free(out);
  rc = pr_verify_webhook((const uint8_t *)"\xff\xfe", 2, "{\"X-Service-Signature\":\"t=1,v1=00\"}", "whsec", NULL, &out);
  CHECK(rc == PR_OK && contains(out, "malformed_body"), "webhook non-UTF-8 body");
  pr_string_free(out);

  /* A deterministic attestation equals the vector's header byte for byte. */
  char path[1024];
  snprintf(path, sizeof path, "%s/attestation.json", vectors);
  char *vector = read_file(path);
  CHECK(vector != NULL, "read attestation.json");
  const char *input =
      "{\"route\":\"chat.completions\",\"body\":\"{\\\"model\\\":\\\"local-chat\\\",\\\"messages\\\":[{\\\"role\\\":\\\"user\\\","
      "\\\"content\\\":\\\"Write to <EMAIL_1_k3f9> about <PERSON_1_m2qd>'s invoice\\\"}]}\",\"detectors_fired\":{\"EMAIL\":1,"
      "\"PERSON\":1},\"engine\":{\"id\":\"relay-ts\",\"version\":\"0.4.0\",\"sha256\":\"eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee\"},"
      "\"trust_tier\":\"self-attested\",\"jti\":\"0123456789abcdef0123456789abcdef\",\"iat\":1735689600,\"deterministic\":true}";
  rc = pr_build_attestation(input, DEVICE_JWK, &out);
  CHECK(rc == PR_OK, "build attestation");
  const char *h = out ? strstr(out, "\"header\":\"") : NULL;
  if (h && vector) {
    h += strlen("\"header\":\"");
    const char *end = strchr(h, '"');
    char header[4096] = {0};
    memcpy(header, h, (size_t)(end - h) < sizeof header - 1 ? (size_t)(end - h) : sizeof header - 1);
    char quoted[4200];
    snprintf(quoted, sizeof quoted, "\"header\": \"%s\"", header);
    CHECK(strlen(header) > 100 && contains(vector, quoted), "attestation header equals the vector");
    char *verdict = NULL;
    rc = pr_verify_receipt(header, "{\"keys\":[]}", "{\"now_seconds\":1735689600}", &verdict);
    CHECK(rc == PR_OK && contains(verdict, "\"valid\":true"), "the attestation verifies offline");
    pr_string_free(verdict);
  } else {
    CHECK(0, "attestation header present");
  }
  pr_string_free(out);
  free(vector);
  rc = pr_build_attestation(input, "{\"kty\":\"EC\"}", &out);
  CHECK(rc == PR_E_INVALID_KEY && contains(out, "invalid_key"), "bad device key");
  pr_string_free(out);
  rc = pr_generate_device_key(&out);
  CHECK(rc == PR_OK && contains(out, "\"private_jwk\":{\"kty\":\"EC\",\"crv\":\"P-256\""), "generate key");
  pr_string_free(out);
  rc = pr_canonicalize("{\"b\":1,\"a\":[1e21,0.1]}", &out);
  CHECK(rc == PR_OK && out && strcmp(out, "{\"a\":[1e+21,0.1],\"b\":1}") == 0, "canonicalize");
  pr_string_free(out);

  /* Hashes (sdks/vectors/sha256.json), a webhook signature and a bare Merkle proof. */
  rc = pr_hash("sha256", (const uint8_t *)"abc", 3, &out);
  CHECK(rc == PR_OK && out && strcmp(out, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") == 0, "sha256");
  pr_string_free(out);
  rc = pr_hash("sha256", NULL, 0, &out);
  CHECK(rc == PR_OK && out && strcmp(out, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855") == 0, "sha256 of nothing");
  pr_string_free(out);
  rc = pr_hash("sha256", NULL, 3, &out);
  CHECK(rc == PR_E_NULL_ARGUMENT, "hash NULL data with a length");
  pr_string_free(out);
  rc = pr_hash("merkle_node", (const uint8_t *)"short", 5, &out);
  CHECK(rc == PR_E_INVALID_ARGUMENT && contains(out, "64 bytes"), "merkle_node needs 64 bytes");
  pr_string_free(out);
  rc = pr_sign_webhook("v1", "{}", "whsec_x", "{\"timestamp\":1}", &out);
  CHECK(rc == PR_OK && contains(out, "t=1,v1="), "sign webhook v1");
  pr_string_free(out);
  rc = pr_sign_webhook("v2", "{}", "whsec_x", NULL, &out);
  CHECK(rc == PR_E_INVALID_ARGUMENT && contains(out, "unknown webhook signature scheme"), "unknown signature scheme");
  pr_string_free(out);
  rc = pr_verify_merkle_proof("inclusion", "{\"leaf_index\":0,\"tree_size\":1,\"leaf_hash\":\"6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d\",\"root_hash\":\"6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d\",\"audit_path\":[]}", &out);
  CHECK(rc == PR_OK && contains(out, "\"valid\":true"), "a one-leaf inclusion proof");
  pr_string_free(out);

  /* Alias tags and the alias pattern (sdks/vectors/aliases.json). */
  rc = pr_alias_tag("request", "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", (const uint8_t *)"EMAIL_1#0", 9, &out);
  CHECK(rc == PR_OK && contains(out, "\"tag\":\"ynha\""), "request alias tag");
  pr_string_free(out);
  rc = pr_alias_tag("request", "not hex", (const uint8_t *)"x", 1, &out);
  CHECK(rc == PR_E_INVALID_ARGUMENT && contains(out, "secret_hex"), "alias tag secret not hex");
  pr_string_free(out);
  rc = pr_alias_tag("sideways", "00", NULL, 0, &out);
  CHECK(rc == PR_E_INVALID_ARGUMENT && contains(out, "unknown alias kind"), "unknown alias kind");
  pr_string_free(out);
  rc = pr_is_alias("<EMAIL_1_k3f9>", &out);
  CHECK(rc == PR_OK && out && strcmp(out, "true") == 0, "is_alias");
  pr_string_free(out);
  rc = pr_is_alias("x <EMAIL_1_k3f9>", &out);
  CHECK(rc == PR_OK && out && strcmp(out, "false") == 0, "is_alias anchored");
  pr_string_free(out);

  /* A panic inside the library stays inside it, and the deliberate one prints nothing (stderr goes to a file meanwhile). */
  fflush(stderr);
  FILE *caught = tmpfile();
  int saved_stderr = dup(2);
  CHECK(caught != NULL && saved_stderr >= 0 && dup2(fileno(caught), 2) >= 0, "stderr redirected");
  rc = pr_debug_panic(&out);
  dup2(saved_stderr, 2);
  close(saved_stderr);
  CHECK(rc == PR_E_INTERNAL && contains(out, "\"code\":\"internal_error\"") && contains(out, "pr_debug_panic was called"),
        "panic is contained");
  pr_string_free(out);
  CHECK(caught != NULL && fseek(caught, 0, SEEK_END) == 0 && ftell(caught) == 0, "the deliberate panic printed nothing");
  if (caught) fclose(caught);
  rc = pr_engine_info(&out);
  CHECK(rc == PR_OK, "the library works after a panic");
  pr_string_free(out);
  CHECK(strcmp(pr_error_code_name(PR_E_INVALID_JSON), "invalid_json") == 0, "code names");
  CHECK(strcmp(pr_error_code_name(12345), "unknown") == 0, "unknown code name");

  printf("c-abi: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
