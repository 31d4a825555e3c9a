/**
 * What the tools work with. `Shared` is one per process (the gateway client, the JWKS cache, the local receipts);
 * `SessionContext` is one per MCP session (its alias map and the receipts of its own calls, for `meter`).
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import type { z } from "zod"
import type { RelayClient } from "../index.ts"
import { createJwksCache, type JwksCache } from "../verify/jwks.ts"
import type { EngineIdentity } from "../wire/attestation/v3.ts"
import { ENGINE } from "../client/engine.ts"
import { probeGateway } from "../client/gatewayUrl.ts"
import type { NameModel } from "../tokeniser/index.ts"
import { loadEngine, warmUp } from "./engine.ts"
import { createOcr, type Ocr } from "../ocr/onDeviceOcr.ts"
import { createLocalReceipts, type LocalReceipts, type Receipt } from "./localReceipts.ts"
import { createSessionAliases, type SessionAliases } from "./sessionAliases.ts"
import type { McpSettings } from "./settings.ts"
import { ToolError } from "./toolResult.ts"

export interface Shared {
  readonly settings: McpSettings
  readonly engine: EngineIdentity
  /** The name model of NAME_MODEL, once the engine has loaded. */
  readonly names: () => Promise<NameModel | "off">
  /** Loads the engine (and warms the built-in name model) in the background; called once the server answers. */
  readonly warmUp: () => Promise<void>
  /**
   * The gateway client, once GATEWAY_URL has answered the gateway identity probe (gateway-locked: the key is never
   * sent to anything else, REST calls included). A ToolError `configuration_error` when GATEWAY_URL or
   * GATEWAY_KEY_FILE is missing or bad, `gateway_identity_failed` when the URL is not a gateway (or is down).
   */
  readonly client: () => Promise<RelayClient>
  /** The gateway's receipt keys, fetched once and cached (10 minutes). */
  readonly jwks: () => JwksCache
  readonly receipts: LocalReceipts
  /** On-device OCR (its worker starts on first use); undefined when MCP_OCR=off. */
  readonly ocr: Ocr | undefined
}

export interface SessionContext {
  readonly shared: Shared
  readonly aliases: SessionAliases
  /** Receipts of this session's calls, for `meter`. */
  readonly received: Array<Receipt>
}

export interface ToolDefinition<I = any> {
  readonly name: string
  readonly title: string
  readonly description: string
  readonly input: z.ZodType<I>
  readonly output?: z.ZodType
  readonly run: (args: I, session: SessionContext) => Promise<CallToolResult>
}

const needGatewayUrl = (settings: McpSettings): string => {
  if (settings.gatewayUrl === undefined) throw new ToolError("configuration_error", "GATEWAY_URL is not set: this tool needs the gateway. Set GATEWAY_URL in the MCP server's environment.")
  return settings.gatewayUrl
}

export const createShared = (settings: McpSettings): Shared => {
  let client: RelayClient | undefined
  let jwks: JwksCache | undefined
  let probed: Promise<void> | undefined
  let names: Promise<NameModel | "off"> | undefined
  // Once per process; a failure is not remembered, so a gateway that comes back is used again.
  const probe = (gatewayUrl: string) =>
    probeGateway(gatewayUrl, { timeoutMs: 10_000 }).catch((error: unknown) => {
      probed = undefined
      throw new ToolError("gateway_identity_failed", error instanceof Error ? error.message : String(error))
    })
  const namesOf = () => (names ??= loadEngine().then((engine) => engine.nameModelOf(settings.nameModel)))
  return {
    settings,
    engine: ENGINE,
    names: namesOf,
    warmUp: () => warmUp(namesOf, settings.nameModel === "builtin"),
    client: async () => {
      if (client !== undefined) {
        await (probed ??= probe(client.gatewayUrl))
        return client
      }
      const gatewayUrl = needGatewayUrl(settings)
      if (settings.gatewayKeyFile === undefined) {
        throw new ToolError("configuration_error", "GATEWAY_KEY_FILE is not set: name a file (mode 0600) holding your gateway key (svc_...).")
      }
      const { RelayClient } = await loadEngine()
      client ??= new RelayClient({
        gatewayUrl,
        apiKeyFile: settings.gatewayKeyFile,
        nameModel: settings.nameModel,
        ...(settings.portalToken === undefined ? {} : { portalToken: settings.portalToken })
      })
      await (probed ??= probe(client.gatewayUrl))
      return client
    },
    jwks: () => (jwks ??= createJwksCache({ gatewayUrl: needGatewayUrl(settings) })),
    receipts: createLocalReceipts(settings.receiptsFile),
    ocr: settings.ocr.enabled ? createOcr({ timeoutMs: settings.ocr.timeoutMs, idleMs: settings.ocr.idleMs }) : undefined
  }
}

export const createSessionContext = (shared: Shared): SessionContext => ({
  shared,
  aliases: createSessionAliases({ maxEntries: shared.settings.aliasMaxEntries, idleMs: shared.settings.sessionIdleMs }),
  received: []
})
