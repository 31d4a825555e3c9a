/** @jsxImportSource preact */
// Small building blocks every page uses: loading, error and empty states in plain words, the "shown once" secret
// box with a copy button, and a confirmation dialog for actions that cannot be undone.
import type { ComponentChildren } from "preact"
import { useEffect, useRef, useState } from "preact/hooks"
import { describeError } from "../api.ts"

export type Load<A> =
  | { readonly state: "loading" }
  | { readonly state: "error"; readonly error: unknown }
  | { readonly state: "ready"; readonly data: A }

/** Runs `load` now and whenever `deps` change or `reload()` is called; an older answer never overwrites a newer one. */
export const useLoad = <A,>(load: () => Promise<A>, deps: ReadonlyArray<unknown> = []) => {
  const [result, setResult] = useState<Load<A>>({ state: "loading" })
  const [round, setRound] = useState(0)
  useEffect(() => {
    let current = true
    setResult((r) => (r.state === "ready" ? r : { state: "loading" }))
    load().then(
      (data) => current && setResult({ state: "ready", data }),
      (error) => current && setResult({ state: "error", error })
    )
    return () => {
      current = false
    }
  }, [...deps, round])
  return [result, () => setRound((n) => n + 1)] as const
}

export const Loading = ({ what }: { what: string }) => (
  <p class="muted" role="status" aria-live="polite">Loading {what}…</p>
)

export const ErrorNotice = ({ error, onRetry }: { error: unknown; onRetry?: () => void }) => {
  const { code, message, signedOut } = describeError(error)
  return (
    <div class="notice error" role="alert">
      <p>{signedOut ? "Your session has ended. Sign in again to continue." : message}</p>
      <p class="muted small">Error code: <code>{code}</code></p>
      {onRetry !== undefined && !signedOut ? <button type="button" onClick={onRetry}>Try again</button> : null}
      {signedOut ? <a href="/portal/sign-in">Sign in</a> : null}
    </div>
  )
}

export const Empty = ({ children }: { children: ComponentChildren }) => <div class="empty">{children}</div>

export const Notice = ({ kind = "info", children }: { kind?: "info" | "success" | "warning"; children: ComponentChildren }) => (
  <div class={`notice ${kind}`} role={kind === "warning" ? "alert" : "status"}>{children}</div>
)

/** A secret shown exactly once: selectable text, a copy button, and the reason it cannot be shown again. */
export const ShownOnce = ({ label, value, children }: { label: string; value: string; children?: ComponentChildren }) => {
  const [copied, setCopied] = useState(false)
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value)
      setCopied(true)
    } catch {
      setCopied(false)
    }
  }
  return (
    <div class="notice success shown-once" role="status">
      <p><strong>{label}</strong> — shown once. Store it now: it cannot be shown again.</p>
      {children}
      <div class="secret-row">
        <code class="secret" data-testid="secret" tabIndex={0}>{value}</code>
        <button type="button" onClick={copy}>{copied ? "Copied" : "Copy"}</button>
      </div>
    </div>
  )
}

/** A button that asks before doing something that cannot be undone (a modal <dialog>: focus stays inside, Esc closes). */
export const ConfirmButton = (props: {
  label: string
  title: string
  children: ComponentChildren
  confirmLabel: string
  danger?: boolean
  onConfirm: () => Promise<void> | void
}) => {
  const dialog = useRef<HTMLDialogElement>(null)
  const [busy, setBusy] = useState(false)
  const confirm = async () => {
    setBusy(true)
    try {
      await props.onConfirm()
    } finally {
      setBusy(false)
      dialog.current?.close()
    }
  }
  return (
    <>
      <button type="button" class={props.danger ? "danger" : ""} onClick={() => dialog.current?.showModal()}>{props.label}</button>
      <dialog ref={dialog} aria-label={props.title}>
        <h2>{props.title}</h2>
        {props.children}
        <div class="actions">
          <button type="button" onClick={() => dialog.current?.close()}>Cancel</button>
          <button type="button" class={props.danger ? "danger" : "primary"} disabled={busy} onClick={confirm}>{props.confirmLabel}</button>
        </div>
      </dialog>
    </>
  )
}

/** Runs an action for a form or button, keeping its error and busy state for the page to show. */
export const useAction = () => {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(undefined)
  const run = async <A,>(action: () => Promise<A>): Promise<A | undefined> => {
    setBusy(true)
    setError(undefined)
    try {
      return await action()
    } catch (e) {
      setError(e)
      return undefined
    } finally {
      setBusy(false)
    }
  }
  return { busy, error, run, clear: () => setError(undefined) }
}

/** Tables scroll sideways on a narrow screen; the scrolling region is focusable so keyboards can scroll it. */
export const TableWrap = ({ label, children }: { label: string; children: ComponentChildren }) => (
  <div class="table-wrap" tabIndex={0} role="region" aria-label={label}>{children}</div>
)

export const useTitle = (title: string) => {
  useEffect(() => {
    document.title = `${title} · Privacy Relay portal`
  }, [title])
}
