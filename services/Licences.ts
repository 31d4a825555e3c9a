import { Context, Data, Effect } from "effect"

/** The code is not a licence this gateway issued (bad signature or shape); `reason` says which. */
export class InvalidLicence extends Data.TaggedError("InvalidLicence")<{ readonly reason: string }> {}

/** Each licence code is redeemed once. */
export class LicenceAlreadyRedeemed extends Data.TaggedError("LicenceAlreadyRedeemed")<{ readonly licenceId: string }> {}

/**
 * Licence codes: signed prepaid credit (src/billing/licenceCode.ts). The operator issues them (`cli.ts licence
 * create --usd N`); an organisation redeems each one once.
 */
export class Licences extends Context.Service<Licences, {
  readonly issue: (micros: bigint) => Effect.Effect<{ readonly code: string; readonly licenceId: string; readonly usd: string; readonly issuedAt: string }>
  /** Fails InvalidLicence or LicenceAlreadyRedeemed. */
  readonly redeem: (orgId: string, code: unknown) =>
    Effect.Effect<{ readonly licenceId: string; readonly amountMicros: bigint; readonly balanceMicros: bigint }, InvalidLicence | LicenceAlreadyRedeemed>
}>()("privacy-relay/Licences") {}
