import { creditWallet } from "../../layers/AdminOperations.ts"
import type { TestGateway } from "./gateway.ts"

let ipCounter = 0
/** A fresh self-service key (from its own pretend network, so issuance limits never interfere) with `usd` credit. */
export const fundedKey = async (gw: TestGateway, usd = "10") => {
  ipCounter++
  const res = await fetch(`${gw.url}/api/v1/self-service/key`, {
    method: "POST",
    headers: { "x-forwarded-for": `198.18.${Math.floor(ipCounter / 250)}.${ipCounter % 250}` },
    body: "{}"
  })
  if (res.status !== 201) throw new Error(`self-service issuance failed: ${res.status} ${await res.text()}`)
  const { api_key, key_prefix } = await res.json()
  const orgId = (await gw.query<{ org_id: string }>("SELECT org_id FROM api_keys WHERE key_prefix = $1", key_prefix))[0].org_id
  if (usd !== "0") await gw.runtime.runPromise(creditWallet({ org_id: orgId, usd }))
  return { apiKey: api_key as string, keyPrefix: key_prefix as string, orgId }
}

export const balanceMicros = async (gw: TestGateway, orgId: string) =>
  BigInt((await gw.query<{ b: string }>("SELECT balance_micros::text AS b FROM wallets WHERE org_id = $1", orgId))[0].b)
