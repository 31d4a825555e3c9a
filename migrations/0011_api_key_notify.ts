import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Every change to what authenticating a key yields (layers/pg/Keys.ts: the key's hash, prefix, organisation, account,
 * tier, status, scopes, models, and its organisation's parent) is announced on `api_keys_changed` with the key's id,
 * by the database itself: whoever makes it (the gateway, the CLI, an operator's hand-written SQL), every node's key
 * cache (layers/pg/KeyCache.ts) hears it when the transaction commits. `last_used_at` and other bookkeeping columns
 * announce nothing, so using a key never evicts it.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE FUNCTION relay_announce_api_key() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('api_keys_changed', OLD.id);
      RETURN NULL;
    END $$`
  yield* sql`CREATE TRIGGER api_keys_announce_update AFTER UPDATE ON api_keys FOR EACH ROW
    WHEN (OLD.key_hash IS DISTINCT FROM NEW.key_hash OR OLD.key_prefix IS DISTINCT FROM NEW.key_prefix
      OR OLD.org_id IS DISTINCT FROM NEW.org_id OR OLD.account_id IS DISTINCT FROM NEW.account_id
      OR OLD.tier IS DISTINCT FROM NEW.tier OR OLD.status IS DISTINCT FROM NEW.status
      OR OLD.permissions IS DISTINCT FROM NEW.permissions OR OLD.models IS DISTINCT FROM NEW.models)
    EXECUTE FUNCTION relay_announce_api_key()`
  yield* sql`CREATE TRIGGER api_keys_announce_delete AFTER DELETE ON api_keys FOR EACH ROW
    EXECUTE FUNCTION relay_announce_api_key()`
  // A key's principal carries its organisation's parent (partner mode): re-parenting announces all its keys.
  yield* sql`CREATE FUNCTION relay_announce_org_keys() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('api_keys_changed', k.id) FROM api_keys k WHERE k.org_id = NEW.id;
      RETURN NULL;
    END $$`
  yield* sql`CREATE TRIGGER organisations_announce_keys AFTER UPDATE ON organisations FOR EACH ROW
    WHEN (OLD.parent_id IS DISTINCT FROM NEW.parent_id)
    EXECUTE FUNCTION relay_announce_org_keys()`
})
