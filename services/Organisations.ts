import { Context, Effect } from "effect"
import type { ApiError } from "../src/http/ApiError.ts"

export class Organisations extends Context.Service<Organisations, {
  /** A new organisation with an empty wallet; `parentId` makes it a sub-organisation. */
  readonly create: (input: { readonly name: string; readonly parentId?: string }) => Effect.Effect<{ readonly orgId: string }, ApiError>
  readonly exists: (orgId: string) => Effect.Effect<boolean>
}>()("privacy-relay/Organisations") {}
