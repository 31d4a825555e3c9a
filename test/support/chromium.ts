import { existsSync } from "node:fs"
import { chromium, type Browser } from "playwright-core"

/** Debian's Chromium (.ci/run installs it when missing). */
export const CHROMIUM = "/usr/bin/chromium"

/** Headless, and quiet: no background requests of its own. */
export const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync"]

export const launchChromium = async (): Promise<Browser> => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run installs it)`)
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: 120_000 })
}

/** A PNG of `lines` as black text on white (a screenshot of a small page), for OCR tests. */
export const renderTextPng = async (browser: Browser, lines: ReadonlyArray<string>, options: { width?: number; height?: number; fontPx?: number } = {}): Promise<Buffer> => {
  const fontPx = options.fontPx ?? 28
  const page = await browser.newPage({ viewport: { width: options.width ?? 720, height: options.height ?? Math.ceil(lines.length * fontPx * 1.5 + 48) } })
  try {
    const escape = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;")
    await page.setContent(`<!doctype html><body style="margin:24px;background:#fff;color:#000;font:${fontPx}px/1.5 'DejaVu Sans',sans-serif">${lines.map(escape).join("<br>")}</body>`)
    return await page.screenshot({ type: "png" })
  } finally {
    await page.close()
  }
}
