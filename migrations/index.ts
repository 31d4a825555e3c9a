import core from "./0001_core.ts"
import outbox from "./0002_outbox.ts"
import receipts from "./0003_receipts.ts"
import webhooks from "./0004_webhooks.ts"
import accounts from "./0005_accounts.ts"
import metering from "./0006_metering.ts"
import billing from "./0007_billing.ts"
import idempotency from "./0008_idempotency.ts"
import byok from "./0009_byok.ts"
import settleBatch from "./0010_settle_batch.ts"
import apiKeyNotify from "./0011_api_key_notify.ts"
import oidcAtRest from "./0012_oidc_at_rest.ts"
import settlePlans from "./0013_settle_plans.ts"
import keyAccounts from "./0014_key_accounts.ts"
import demoKeys from "./0015_demo_keys.ts"
import routingPolicies from "./0016_routing_policies.ts"
import settleMany from "./0017_settle_many.ts"
import accountOperators from "./0018_account_operators.ts"
import retention from "./0019_retention.ts"
import receiptKeySchedule from "./0020_receipt_key_schedule.ts"
import idempotencyLz4 from "./0021_idempotency_lz4.ts"
import sso from "./0022_sso.ts"
import scim from "./0023_scim.ts"
import settleFewerStatements from "./0024_settle_fewer_statements.ts"
import scimTokenLastUsed from "./0025_scim_token_last_used.ts"

/**
 * Every migration, by `<number>_<name>`, in order. Imported statically (not read from the file system) so the
 * same list runs under Node and Deno and from any working directory.
 */
export const migrations = {
  "0001_core": core,
  "0002_outbox": outbox,
  "0003_receipts": receipts,
  "0004_webhooks": webhooks,
  "0005_accounts": accounts,
  "0006_metering": metering,
  "0007_billing": billing,
  "0008_idempotency": idempotency,
  "0009_byok": byok,
  "0010_settle_batch": settleBatch,
  "0011_api_key_notify": apiKeyNotify,
  "0012_oidc_at_rest": oidcAtRest,
  "0013_settle_plans": settlePlans,
  "0014_key_accounts": keyAccounts,
  "0015_demo_keys": demoKeys,
  "0016_routing_policies": routingPolicies,
  "0017_settle_many": settleMany,
  "0018_account_operators": accountOperators,
  "0019_retention": retention,
  "0020_receipt_key_schedule": receiptKeySchedule,
  "0021_idempotency_lz4": idempotencyLz4,
  "0022_sso": sso,
  "0023_scim": scim,
  "0024_settle_fewer_statements": settleFewerStatements,
  "0025_scim_token_last_used": scimTokenLastUsed
}
