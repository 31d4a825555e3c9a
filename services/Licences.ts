import { Context, Effect } from "effect"
import type { ApiError } from "../src/http/ApiError.ts"

/**
 * Licence codes: signed prepaid credit (src/billing/licenceCode.ts). The operator issues them (`cli.ts licence
 * create --usd N`); an organisation redeems each one once.
 */
export class Licences extends Context.Service<Licences, {
  readonly issue: (micros: bigint) => Effect.Effect<{ readonly code: string; readonly licenceId: string; readonly usd: string; readonly issuedAt: string }>
  /** 400 `invalid_licence` (bad signature or shape), 409 `licence_already_redeemed`. */
  readonly redeem: (orgId: string, code: unknown) =>
    Effect.Effect<{ readonly licenceId: string; readonly amountMicros: bigint; readonly balanceMicros: bigint }, ApiError>
}>()("privacy-relay/Licences") {}
