/**
 * The egress policy stays complete against the official SDKs the project pins: every node annotated with `sdk`
 * ("openai:TypeName" or "anthropic:TypeName", namespaces dotted) is compared with that request type in the installed
 * `openai` and `@anthropic-ai/sdk` packages. An object node must classify every property of the type; a tagged node
 * every discriminator value of the union. A pinned version that grows a request field or part type fails here
 * until the policy classifies it (tokenise, tokenise-stable, pass or refuse).
 */
import { join } from "node:path"
import ts from "typescript"
import { describe, expect, it } from "vitest"
import policy from "../../../sdks/vectors/egress-policy.json" with { type: "json" }

// The installed packages (package.json pins the versions; sources in egress-policy.json name them).
const packageRoot = (name: string) => join(import.meta.dirname, "../../../node_modules", name)
const ROOTS = { openai: packageRoot("openai"), anthropic: packageRoot("@anthropic-ai/sdk") }

const DECLARATION_FILES = {
  openai: ["resources/chat/completions/completions.d.ts", "resources/embeddings.d.ts", "resources/responses/responses.d.ts", "resources/shared.d.ts"],
  anthropic: ["resources/messages/messages.d.ts"]
}

type Node = string | Record<string, unknown>

const program = ts.createProgram(
  Object.entries(DECLARATION_FILES).flatMap(([pkg, files]) => files.map((f) => join(ROOTS[pkg as keyof typeof ROOTS], f))),
  { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, strict: true, skipLibCheck: true, noEmit: true }
)
const checker = program.getTypeChecker()

/** Every interface and type alias of a package's declaration files, by qualified name (namespaces dotted). */
const declarations = (pkg: keyof typeof ROOTS): Map<string, ts.Declaration> => {
  const found = new Map<string, ts.Declaration>()
  const visit = (statements: ts.NodeArray<ts.Statement>, prefix: string) => {
    for (const statement of statements) {
      if ((ts.isInterfaceDeclaration(statement) || ts.isTypeAliasDeclaration(statement)) && !found.has(prefix + statement.name.text)) {
        found.set(prefix + statement.name.text, statement)
      }
      if (ts.isModuleDeclaration(statement) && statement.body !== undefined && ts.isModuleBlock(statement.body)) {
        visit(statement.body.statements, `${prefix}${statement.name.getText()}.`)
      }
    }
  }
  for (const file of DECLARATION_FILES[pkg]) visit(program.getSourceFile(join(ROOTS[pkg], file))!.statements, "")
  return found
}
const DECLARATIONS = { openai: declarations("openai"), anthropic: declarations("anthropic") }

const typeOf = (annotation: string): ts.Type => {
  const [pkg, name] = annotation.split(":") as [keyof typeof ROOTS, string]
  const declaration = DECLARATIONS[pkg].get(name)
  if (declaration === undefined) throw new Error(`${annotation}: no such type in the pinned ${pkg} package`)
  return checker.getTypeAtLocation((declaration as ts.InterfaceDeclaration).name)
}

const literalsOf = (type: ts.Type): Array<string> =>
  (type.isUnion() ? type.types : [type]).filter((t) => t.isStringLiteral()).map((t) => (t as ts.StringLiteralType).value)

/** Every annotated node of the policy, with where it is. */
const annotated = (): Array<{ where: string; node: Record<string, unknown> }> => {
  const out: Array<{ where: string; node: Record<string, unknown> }> = []
  const visit = (node: unknown, where: string) => {
    if (typeof node !== "object" || node === null) return
    const record = node as Record<string, unknown>
    if (typeof record.sdk === "string") out.push({ where, node: record })
    for (const [key, value] of Object.entries(record)) visit(value, `${where}.${key}`)
  }
  visit(policy.routes, "routes")
  visit(policy.definitions, "definitions")
  return out
}

describe("the egress policy classifies every field and part type of the pinned official SDKs' request types", () => {
  const nodes = annotated()

  it("annotates the request types of every route", () => {
    for (const route of Object.keys(policy.routes)) expect(typeof (policy.routes as Record<string, Node & { sdk?: string }>)[route]!.sdk).toBe("string")
    expect(nodes.length).toBeGreaterThan(30)
  })

  for (const { where, node } of nodes) {
    it(`${where} (${node.sdk as string})`, () => {
      const type = typeOf(node.sdk as string)
      if ("object" in node) {
        const named = Object.keys(node.object as Record<string, unknown>)
        const missing = checker.getPropertiesOfType(type).map((p) => p.name).filter((p) => !named.includes(p))
        if (!("other" in node)) expect(missing, `fields of ${node.sdk as string} the policy does not classify`).toEqual([])
      } else if ("tagged" in node) {
        const field = node.tagged as string
        const variants = Object.keys(node.variants as Record<string, unknown>)
        const members = type.isUnion() ? type.types : [type]
        const values = members.flatMap((member) => {
          const property = checker.getPropertyOfType(member, field)
          if (property === undefined) return []
          return literalsOf(checker.getNonNullableType(checker.getTypeOfSymbol(property)))
        })
        expect(values.length).toBeGreaterThan(0)
        expect([...new Set(values.filter((v) => !variants.includes(v)))], `${field} values of ${node.sdk as string} the policy does not classify`).toEqual([])
      } else {
        throw new Error(`${where}: an sdk annotation belongs on an object or tagged node`)
      }
    })
  }
})
