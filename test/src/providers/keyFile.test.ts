import { describe, expect, it } from "vitest"
import { keySlotLabel, parseKeyFile } from "../../../src/providers/keyFile.ts"

describe("pooled-key file", () => {
  it("reads a one-key file as before, trailing newline or not", () => {
    expect(parseKeyFile("sk-one")).toEqual(["sk-one"])
    expect(parseKeyFile("  sk-one  \n")).toEqual(["sk-one"])
  })

  it("reads one key per line, ignoring blank lines, # comments and CRLF", () => {
    expect(parseKeyFile("# team A\nsk-a\r\n\n  # old key removed\nsk-b\n  sk-c \n")).toEqual(["sk-a", "sk-b", "sk-c"])
    expect(parseKeyFile("# nothing here\n\n")).toEqual([])
  })

  it("names a key by its position only", () => {
    expect(keySlotLabel({ index: 1, count: 3 })).toBe("key 2 of 3")
  })
})
