import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer, Logger, References } from "effect"
import { FetchHttpClient, HttpMiddleware, HttpRouter, HttpServer } from "effect/http"
import { OtlpSerialization, OtlpTracer } from "effect/observability"
import { mkdirSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { AppConfig, parseGatewayConfig } from "../services/AppConfig.ts"
import { GatewayMetrics } from "../services/GatewayMetrics.ts"
import { BootstrapAdminToken } from "./Bootstrap.ts"
import { AccountRoutes } from "./http/AccountRoutes.ts"
import { AdminRoutes } from "./http/AdminRoutes.ts"
import { BillingRoutes } from "./http/BillingRoutes.ts"
import { ByokRoutes } from "./http/ByokRoutes.ts"
import { PartnerRoutes } from "./http/PartnerRoutes.ts"
import { KeyRoutes } from "./http/KeyRoutes.ts"
import { KeySelfRoutes } from "./http/KeySelfRoutes.ts"
import { ObservabilityMiddleware, RouteTemplateMiddleware } from "./http/Observability.ts"
import { PortalRoutes } from "./http/PortalRoutes.ts"
import { PortalSessionRoutes } from "./http/PortalSessionRoutes.ts"
import { MetricsRoutes } from "./http/MetricsRoutes.ts"
import { ModelRoutes } from "./http/ModelRoutes.ts"
import { OpenApiRoutes } from "./http/OpenApiRoutes.ts"
import { PublicRoutes } from "./http/PublicRoutes.ts"
import { ReadinessRoutes } from "./http/ReadinessRoutes.ts"
import { RelayRoutes } from "./http/RelayRoutes.ts"
import { SelfServiceRoutes } from "./http/SelfServiceRoutes.ts"
import { DemoRoutes } from "./http/DemoRoutes.ts"
import { drainingHttpServerLayer } from "./http/DrainingHttpServer.ts"
import { createGatewayNodeServer } from "./http/gatewayNodeServer.ts"
import { WebhookRoutes } from "./http/WebhookRoutes.ts"
import { ScimRoutes } from "./http/ScimRoutes.ts"
import { AdmissionCountersMemory } from "./memory/AdmissionCounters.ts"
import { QuotasMemory } from "./memory/Quotas.ts"
import { RateWindowsMemory } from "./memory/RateWindows.ts"
import { SlotsMemory } from "./memory/Slots.ts"
import { OidcProviderLive } from "./oidc/OidcProvider.ts"
import { OidcRoutes } from "./oidc/OidcRoutes.ts"
import { PaymentsLive } from "./payments/PaymentsLive.ts"
import { AccountsLive } from "./pg/Accounts.ts"
import { BillingHistoryPg } from "./pg/BillingHistory.ts"
import { ByokPg } from "./pg/Byok.ts"
import { SsoConnectionsPg } from "./pg/SsoConnections.ts"
import { SsoSignInLive } from "./sso/SsoSignInLive.ts"
import { SsoRoutes } from "./http/SsoRoutes.ts"
import { LicencesPg } from "./pg/Licences.ts"
import { OrgLimitsPg } from "./pg/OrgLimits.ts"
import { RoutingPoliciesPg } from "./pg/RoutingPolicies.ts"
import { DatabaseLive } from "./pg/Database.ts"
import { KeyEncryptionLive } from "./KeyEncryptionLive.ts"
import { KeyManagementPg } from "./pg/KeyManagement.ts"
import { IdempotencyPg } from "./pg/Idempotency.ts"
import { KeyCache } from "./pg/KeyCache.ts"
import { KeysPg } from "./pg/Keys.ts"
import { OrganisationsPg } from "./pg/Organisations.ts"
import { OutboxPg } from "./pg/Outbox.ts"
import { PortalSessionsPg } from "./pg/PortalSessions.ts"
import { PortalTokensPg } from "./pg/PortalTokens.ts"
import { SettlementPg } from "./pg/Settlement.ts"
import { ProviderRouterLive } from "./providers/ProviderRouterLive.ts"
import { ReceiptRoutesLive, ReceiptsLive } from "./ReceiptsLive.ts"
import { RelayLimitsLive } from "./RelayLimitsLive.ts"
import { WalletsPg } from "./pg/Wallets.ts"
import { AdmissionCountersRedis } from "./redis/AdmissionCounters.ts"
import { QuotasRedis } from "./redis/Quotas.ts"
import { RateWindowsRedis } from "./redis/RateWindows.ts"
import { RedisClient } from "./redis/RedisClient.ts"
import { SlotsRedis } from "./redis/Slots.ts"
import { WebhooksLive } from "./WebhooksLive.ts"
import { ScimDirectoryPg } from "./pg/ScimDirectory.ts"
import { ScimTokensPg } from "./pg/ScimTokens.ts"

/** Redis when REDIS_URL is set (shared across nodes), in-process otherwise (one node only). */
const SharedStateLive = Layer.unwrap(
  Effect.map(Effect.service(AppConfig), (config) =>
    config.redisUrl !== undefined
      ? Layer.mergeAll(RateWindowsRedis, SlotsRedis).pipe(Layer.provide(RedisClient.layer))
      : Layer.mergeAll(RateWindowsMemory, SlotsMemory))
)

/** Monthly token counters, beside the rate windows: Redis when REDIS_URL is set, in-process otherwise. */
const QuotasLive = Layer.unwrap(
  Effect.map(Effect.service(AppConfig), (config) =>
    config.redisUrl !== undefined ? QuotasRedis.pipe(Layer.provide(RedisClient.layer)) : QuotasMemory)
)

/** A relay call's admission (slot, quota, windows, wallet hold) in one operation: one script run with Redis, in process otherwise. */
const AdmissionCountersLive = Layer.unwrap(
  Effect.map(Effect.service(AppConfig), (config) =>
    config.redisUrl !== undefined
      ? AdmissionCountersRedis.pipe(Layer.provide(RedisClient.layer))
      : AdmissionCountersMemory.pipe(Layer.provide(Layer.mergeAll(QuotasLive, SharedStateLive))))
)

const DomainLive = Layer.mergeAll(
  KeysPg,
  KeyManagementPg,
  AccountsLive,
  PortalSessionsPg,
  // The shared rate windows: the login form counts sign-in attempts in the portal's windows.
  OidcProviderLive.pipe(Layer.provide(Layer.mergeAll(KeyEncryptionLive, SharedStateLive))),
  PortalTokensPg,
  ScimTokensPg,
  ScimDirectoryPg,
  OrganisationsPg,
  WalletsPg,
  SettlementPg.pipe(Layer.provide(Layer.mergeAll(ReceiptsLive, QuotasLive))),
  PaymentsLive,
  LicencesPg,
  BillingHistoryPg,
  WebhooksLive,
  ReceiptsLive
).pipe(Layer.provideMerge(OutboxPg), Layer.provide(KeyCache.layer))

/** Readiness probes Redis only when it is configured, over the same connection as the shared state. */
const ReadinessLive = Layer.unwrap(
  Effect.map(Effect.service(AppConfig), (config) =>
    config.redisUrl !== undefined ? ReadinessRoutes.pipe(Layer.provide(RedisClient.layer)) : ReadinessRoutes)
)

/** Every route of the gateway (exported so a test can list what the router serves). */
export const RoutesLive = Layer.mergeAll(
  ObservabilityMiddleware,
  PublicRoutes,
  OpenApiRoutes,
  ReadinessLive,
  MetricsRoutes,
  ModelRoutes,
  SelfServiceRoutes,
  DemoRoutes,
  AdminRoutes,
  KeyRoutes,
  KeySelfRoutes,
  AccountRoutes,
  PortalSessionRoutes,
  SsoRoutes,
  PortalRoutes,
  OidcRoutes,
  BillingRoutes,
  PartnerRoutes,
  WebhookRoutes,
  RelayRoutes,
  ReceiptRoutesLive,
  ByokRoutes,
  ScimRoutes
).pipe(Layer.provide(RouteTemplateMiddleware))

/** Structured JSON logs on stdout at LOG_LEVEL; spans exported over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set. */
const ObservabilityLive = Layer.unwrap(
  Effect.map(Effect.service(AppConfig), (config) => {
    const level = ({ debug: "Debug", info: "Info", warn: "Warn", error: "Error" } as const)[config.logLevel]
    const logs = Layer.mergeAll(Logger.layer([Logger.consoleJson]), Layer.succeed(References.MinimumLogLevel, level))
    if (config.otlpEndpoint === undefined) return logs
    const tracer = OtlpTracer.layer({
      url: `${config.otlpEndpoint.replace(/\/+$/, "")}/v1/traces`,
      resource: { serviceName: "privacy-relay-gateway" }
    }).pipe(Layer.provide(OtlpSerialization.layerJson), Layer.provide(FetchHttpClient.layer))
    // Our middleware's server span (layers/http/serverSpan.ts) is the request's span; Effect's own `http.server`
    // span would be an unexported-id sibling of it, so it is turned off.
    const noBuiltInServerSpan = Layer.succeed(HttpMiddleware.TracerDisabledWhen)(() => true)
    return Layer.mergeAll(logs, tracer, noBuiltInServerSpan)
  })
)

/**
 * With embedded storage, DATA_DIR/gateway.json tells `cli.ts` where the running gateway listens (and its pid), so
 * it uses the admin API instead of opening the PGlite directory a second time. Removed on shutdown.
 */
const AnnounceAddress = Layer.effectDiscard(
  Effect.gen(function*() {
    const config = yield* AppConfig
    const server = yield* HttpServer.HttpServer
    const url = HttpServer.formatAddress(server.address)
    yield* Effect.logInfo("gateway listening").pipe(
      Effect.annotateLogs({ url, storage: config.databaseUrl ? "postgres" : "pglite", shared_state: config.redisUrl ? "redis" : "memory" })
    )
    if (config.databaseUrl !== undefined || config.dataDir === undefined) return
    const file = join(config.dataDir, "gateway.json")
    yield* Effect.acquireRelease(
      Effect.sync(() => {
        mkdirSync(config.dataDir!, { recursive: true, mode: 0o700 })
        writeFileSync(file, JSON.stringify({ url, pid: process.pid }) + "\n", { mode: 0o600 })
      }),
      () => Effect.sync(() => rmSync(file, { force: true }))
    )
  })
)

/** Everything the gateway needs except the HTTP server itself, for the program and for in-process tests. */
export const gatewayServicesLayer = (env: Readonly<Record<string, string | undefined>>) => {
  const config = AppConfig.fromEnv(env)
  const storage = DatabaseLive.pipe(Layer.provide(config))
  const domain = DomainLive.pipe(Layer.provideMerge(storage))
  const withBootstrap = BootstrapAdminToken.pipe(Layer.provideMerge(domain))
  const orgLimits = OrgLimitsPg.pipe(Layer.provide(storage))
  const routingPolicies = RoutingPoliciesPg.pipe(Layer.provide(storage))
  // The same KeyEncryptionLive value as the other capabilities use, so one KEK instance per gateway.
  const byok = ByokPg.pipe(Layer.provide(Layer.mergeAll(storage, KeyEncryptionLive)))
  const sso = SsoConnectionsPg.pipe(Layer.provide(Layer.mergeAll(storage, KeyEncryptionLive)))
  const ssoSignIn = SsoSignInLive.pipe(Layer.provide(Layer.mergeAll(sso, withBootstrap)))
  const wallets = WalletsPg.pipe(Layer.provide(storage))
  const relay = Layer.mergeAll(ProviderRouterLive.pipe(Layer.provide(byok)), RelayLimitsLive.pipe(Layer.provideMerge(AdmissionCountersLive), Layer.provide(Layer.mergeAll(orgLimits, wallets))), IdempotencyPg.pipe(Layer.provide(storage))).pipe(
    Layer.provide(SharedStateLive)
  )
  return Layer.mergeAll(withBootstrap, SharedStateLive, relay, orgLimits, routingPolicies, QuotasLive, byok, sso, ssoSignIn, GatewayMetrics.layer).pipe(Layer.provideMerge(config), Layer.provideMerge(ObservabilityLive.pipe(Layer.provide(config))))
}

/**
 * The whole gateway: routes served on HOST:PORT. The HttpServer stays in the output so callers can read its address.
 * `shutdown: "drain"` (the programs) stops it the way a deployment needs, over SHUTDOWN_GRACE_MS
 * (layers/http/DrainingHttpServer.ts); in-process test gateways keep Effect's plain close, which does not wait for
 * clients to drop their idle connections.
 */
export const gatewayLayer = (
  env: Readonly<Record<string, string | undefined>>,
  /** Pass one services layer to several gateways (with a shared MemoMap) to run them over the same storage in one process. */
  services: ReturnType<typeof gatewayServicesLayer> = gatewayServicesLayer(env),
  options: { readonly shutdown?: "drain" | "close" } = {}
) => {
  const settings = parseGatewayConfig(env)
  const server = options.shutdown === "drain"
    ? drainingHttpServerLayer({ port: settings.port, host: settings.host, graceMs: settings.shutdownGraceMs })
    : NodeHttpServer.layer(createGatewayNodeServer, { port: settings.port, host: settings.host })
  return Layer.mergeAll(HttpRouter.serve(RoutesLive, { disableLogger: true }), AnnounceAddress).pipe(
    Layer.provideMerge(server),
    Layer.provideMerge(services)
  )
}
