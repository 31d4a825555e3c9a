// Pages are paths under /portal/ (the gateway answers every extension-less path there with the app), so links can
// be bookmarked and shared. Navigation uses the History API; the browser's back button works.
import { useEffect, useState } from "preact/hooks"

export const BASE = "/portal"

const current = () => location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) || "/" : "/"

const listeners = new Set<() => void>()
window.addEventListener("popstate", () => listeners.forEach((l) => l()))

export const navigate = (path: string, options: { replace?: boolean } = {}) => {
  const url = `${BASE}${path}`
  if (options.replace) history.replaceState(null, "", url)
  else history.pushState(null, "", url)
  listeners.forEach((l) => l())
  window.scrollTo(0, 0)
}

export const usePath = (): string => {
  const [path, setPath] = useState(current())
  useEffect(() => {
    const update = () => setPath(current())
    listeners.add(update)
    return () => void listeners.delete(update)
  }, [])
  return path.replace(/\/+$/, "") || "/"
}

/** A link that navigates inside the app without a page load (ctrl/cmd-click still opens a new tab). */
export const onLinkClick = (path: string) => (event: MouseEvent) => {
  if (event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return
  event.preventDefault()
  navigate(path)
}
