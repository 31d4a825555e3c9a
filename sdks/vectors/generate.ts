// Generates the cross-language test vectors sdks/vectors/*.json from fixed keys and inputs with the repository's own
// wire-format code (the one copy the gateway and the TypeScript SDK share), with deterministic RFC 6979 signatures, so
// the files are the same on every run.
//
//   node sdks/vectors/generate.ts            writes the files
//   node sdks/vectors/generate.ts --check    writes nothing; exits 1 naming every file that differs from what it
//                                            would generate (a changed wire format, or a hand-edited vector)
//   --dir <path>                             another folder than sdks/vectors (tests)
import { readFileSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { buildAliasVectors } from "./build/aliases.ts"
import { ATTESTATION_INPUTS, buildAttestationVectors, buildVectorAttestation } from "./build/attestation.ts"
import { buildEgressPolicyCases } from "./build/egressPolicyCases.ts"
import { buildJcs } from "./build/jcs.ts"
import { DEVICE_KEY_LABEL, fixedKey, GATEWAY_KEY_LABEL, PREVIOUS_GATEWAY_KEY_LABEL } from "./build/keys.ts"
import { buildMerkleProofVectors } from "./build/merkleProofs.ts"
import { buildNameVectors } from "./build/names.ts"
import { buildReceiptVectors, buildVectorReceipts } from "./build/receipts.ts"
import { buildSha256 } from "./build/sha256.ts"
import { buildTokeniserVectors } from "./build/tokeniser.ts"
import { buildTokeniserLargeVectors } from "./build/tokeniserLarge.ts"
import { buildTransparencyVectors } from "./build/transparency.ts"
import { buildWebhookVectors } from "./build/webhooks.ts"

/** Every vector file, by name, as the text it must hold. */
export const generateVectors = async (): Promise<Record<string, string>> => {
  const device = await fixedKey(DEVICE_KEY_LABEL)
  const gateway = await fixedKey(GATEWAY_KEY_LABEL)
  const attestations = await Promise.all(ATTESTATION_INPUTS.map((input) => buildVectorAttestation(device, input)))
  const files: Record<string, unknown> = {
    "jcs.json": buildJcs(),
    "sha256.json": await buildSha256(),
    "attestation.json": await buildAttestationVectors(device),
    "receipts.json": await buildReceiptVectors(gateway, attestations),
    "transparency.json": await buildTransparencyVectors(gateway, await fixedKey(PREVIOUS_GATEWAY_KEY_LABEL), await buildVectorReceipts(gateway, attestations[0]!)),
    "merkle-proofs.json": await buildMerkleProofVectors(),
    "webhooks.json": await buildWebhookVectors(),
    "aliases.json": await buildAliasVectors(),
    "tokeniser-spans.json": await buildTokeniserVectors(),
    "tokeniser-large.json": await buildTokeniserLargeVectors(),
    "tokeniser-names.json": await buildNameVectors(),
    "egress-policy-cases.json": await buildEgressPolicyCases()
  }
  return Object.fromEntries(Object.entries(files).map(([name, content]) => [name, `${JSON.stringify(content, null, 2)}\n`]))
}

const main = async (args: ReadonlyArray<string>) => {
  const check = args.includes("--check")
  const dirIndex = args.indexOf("--dir")
  const dir = dirIndex >= 0 && args[dirIndex + 1] !== undefined ? args[dirIndex + 1]! : dirname(fileURLToPath(import.meta.url))
  const files = await generateVectors()
  const differing: Array<string> = []
  for (const [name, text] of Object.entries(files)) {
    const path = join(dir, name)
    let onDisk: string | undefined
    try {
      onDisk = readFileSync(path, "utf8")
    } catch {
      onDisk = undefined
    }
    if (onDisk === text) continue
    differing.push(name)
    if (!check) writeFileSync(path, text)
  }
  if (check) {
    if (differing.length > 0) {
      console.error(`vectors differ from what sdks/vectors/generate.ts produces: ${differing.join(", ")} (run npm run vectors and review the diff)`)
      process.exit(1)
    }
    console.log(`vectors up to date: ${Object.keys(files).length} files in ${dir}`)
  } else {
    console.log(differing.length === 0 ? "vectors unchanged" : `wrote ${differing.join(", ")}`)
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) await main(process.argv.slice(2))
