/** "What left your device": a message as it was sent, each alias highlighted, with what it stands for on hover. */
import type { ReactNode } from "react"

export const WhatLeft = (props: { readonly tokenised: string; readonly aliasPattern: RegExp | undefined; readonly aliases: ReadonlyMap<string, string> }) => {
  const parts: Array<ReactNode> = []
  let count = 0
  if (props.aliasPattern === undefined) {
    parts.push(props.tokenised)
  } else {
    let last = 0
    for (const match of props.tokenised.matchAll(new RegExp(props.aliasPattern.source, "g"))) {
      if (match.index > last) parts.push(props.tokenised.slice(last, match.index))
      const original = props.aliases.get(match[0])
      parts.push(
        <mark key={match.index} className="alias" title={original === undefined ? undefined : `stands for: ${original} (kept on this device)`}>
          {match[0]}
        </mark>
      )
      count++
      last = match.index + match[0].length
    }
    if (last < props.tokenised.length) parts.push(props.tokenised.slice(last))
  }
  return (
    <details className="what-left">
      <summary>What left your device{count > 0 ? ` (${count} ${count === 1 ? "alias" : "aliases"})` : ""}</summary>
      <p className="tokenised" data-testid="tokenised">{parts}</p>
    </details>
  )
}
