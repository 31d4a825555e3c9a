/** The name model a proxy setting names. */
import { builtinNameModel, compromiseNameModel, httpNameModel, type NameModel } from "../tokeniser/index.ts"
import type { NameModelSetting } from "./proxyConfig.ts"

export const nameModelFor = (setting: NameModelSetting): NameModel | "off" => {
  switch (setting.kind) {
    case "builtin":
      return builtinNameModel
    case "compromise":
      return compromiseNameModel
    case "off":
      return "off"
    case "http":
      return httpNameModel({ url: setting.url })
  }
}
