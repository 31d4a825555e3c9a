import { describe } from "vitest"
import { SlotsMemory } from "../../../layers/memory/Slots.ts"
import { slotsContract } from "../../support/slotsContract.ts"

describe("SlotsMemory", () => {
  slotsContract(() => SlotsMemory)
})
