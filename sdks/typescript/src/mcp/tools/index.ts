import type { ToolDefinition } from "../context.ts"
import { deviceTools } from "./device.ts"
import { fileTools } from "./files.ts"
import { gatewayTools } from "./gateway.ts"
import { receiptTools } from "./receipts.ts"

/** The 22 tools, by name. */
export const TOOLS: ReadonlyArray<ToolDefinition> = [...deviceTools, ...fileTools, ...gatewayTools, ...receiptTools]
