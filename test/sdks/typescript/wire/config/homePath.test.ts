// `~` in path settings, the rule in the SDK's wire (sdks/typescript/src/wire/config/homePath.ts) that the SDK's
// programs and the starter kit's server share (as `Settings` of @privacy-relay/sdk/wire). The wire imports no node:
// module, so the caller hands in the home directory and path join; this file holds the rule to that and the wire's
// entry to portability. The rule against the gateway's own copy: test/src/config/homePaths.test.ts.
import { readFileSync } from "node:fs"
import { homedir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { expandHomePath, type HomePaths, homePathSetting } from "../../../../../sdks/typescript/src/wire/config/homePath.ts"
import { ConfigInvalid, readSettings } from "../../../../../sdks/typescript/src/wire/config/setting.ts"
import { Settings } from "../../../../../sdks/typescript/src/wire/index.ts"
import { importSpecifiers, reachableFiles, REPO_ROOT } from "../../../../support/importGraph.ts"

const NODE: HomePaths = { homedir, join }

describe("~ in the wire's Settings", () => {
  it("~ and ~/ are $HOME, else the platform's home directory; other paths are as given", () => {
    expect(expandHomePath("~", "X_FILE", { HOME: "/home/ada" }, NODE)).toBe("/home/ada")
    expect(expandHomePath("~/a/b", "X_FILE", { HOME: "/home/ada" }, NODE)).toBe("/home/ada/a/b")
    expect(expandHomePath("~/key", "X_FILE", {}, { homedir: () => "/home/from-passwd", join })).toBe("/home/from-passwd/key")
    for (const path of ["/abs/key", "rel/key", "./~/key"]) expect(expandHomePath(path, "X_FILE", { HOME: "/home/ada" }, NODE)).toBe(path)
  })

  it("~user is a ConfigInvalid naming the setting, not a folder named ~user", () => {
    expect(() => expandHomePath("~bob/key", "GATEWAY_KEY_FILE", { HOME: "/home/ada" }, NODE)).toThrow(ConfigInvalid)
    expect(() => expandHomePath("~bob/key", "GATEWAY_KEY_FILE", { HOME: "/home/ada" }, NODE)).toThrow(
      "GATEWAY_KEY_FILE ~bob/key: only ~ or ~/ (your home directory) is expanded, not ~user; give the full path."
    )
  })

  it("as a setting: blank is unset, ~/ is read from the env it is given", () => {
    const schema = { appDir: homePathSetting("STARTER_APP_DIR", NODE, "starter-kit/dist") }
    expect(readSettings(schema, { HOME: "/home/ada", STARTER_APP_DIR: "~/app" })).toEqual({ appDir: "/home/ada/app" })
    expect(readSettings(schema, { STARTER_APP_DIR: " " })).toEqual({ appDir: undefined })
    expect(schema.appDir.fallback).toBe("starter-kit/dist")
    expect(() => readSettings(schema, { STARTER_APP_DIR: "~bob/app" })).toThrow(ConfigInvalid)
    expect(Settings.homePathSetting).toBe(homePathSetting)
    expect(Settings.expandHomePath).toBe(expandHomePath)
  })

  it("@privacy-relay/sdk/wire stays portable: nothing its entry reaches imports a node: module", () => {
    const files = [...reachableFiles("sdks/typescript/src/wire/index.ts")].filter((f) => f.endsWith(".ts"))
    expect(files).toContain("sdks/typescript/src/wire/config/homePath.ts")
    expect(files).toContain("sdks/typescript/src/wire/config/gatewayUrl.ts")
    const nodeImports = files.flatMap((f) => importSpecifiers(readFileSync(join(REPO_ROOT, f), "utf8")).filter((s) => s.startsWith("node:")).map((s) => `${f}: ${s}`))
    expect(nodeImports).toEqual([])
  })
})
