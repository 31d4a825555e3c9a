/**
 * Walks one XML part of a package (saxes: a strict, streaming parser) with the element names as written
 * (`w:p`, `a:t`). A part that is not well-formed XML makes the whole file malformed.
 */
import { SaxesParser } from "saxes"
import { FileError } from "./FileError.ts"

export interface XmlHandlers {
  readonly open?: (name: string, attributes: Readonly<Record<string, string>>, selfClosing: boolean) => void
  readonly close?: (name: string) => void
  readonly text?: (text: string) => void
}

export const walkXml = (xml: string, part: string, handlers: XmlHandlers): void => {
  const parser = new SaxesParser()
  let failure: Error | undefined
  parser.on("error", (error) => {
    failure ??= error
  })
  if (handlers.open !== undefined) {
    const open = handlers.open
    parser.on("opentag", (tag) => open(tag.name, tag.attributes as Record<string, string>, tag.isSelfClosing))
  }
  if (handlers.close !== undefined) {
    const close = handlers.close
    parser.on("closetag", (tag) => close(tag.name))
  }
  if (handlers.text !== undefined) {
    parser.on("text", handlers.text)
    parser.on("cdata", handlers.text)
  }
  try {
    parser.write(xml).close()
  } catch (error) {
    if (error instanceof FileError) throw error
    failure ??= error as Error
  }
  if (failure !== undefined) throw new FileError("file_malformed", `The file's ${part} is not well-formed XML.`, failure)
}

/** Relationship id -> target of a `.rels` part. */
export const readRelationships = (xml: string | undefined, part: string): Map<string, { readonly target: string; readonly type: string }> => {
  const out = new Map<string, { target: string; type: string }>()
  if (xml === undefined) return out
  walkXml(xml, part, {
    open: (name, attributes) => {
      if (name === "Relationship" && attributes.Id !== undefined && attributes.Target !== undefined && attributes.TargetMode !== "External") {
        out.set(attributes.Id, { target: attributes.Target, type: attributes.Type ?? "" })
      }
    }
  })
  return out
}
