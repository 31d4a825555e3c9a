const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" })[c]!)

/** The provider's sign-in page: a plain form posting `email` and `password` to the interaction URL. */
export const renderLoginForm = (input: { readonly action: string; readonly clientId: string; readonly error?: string; readonly code?: string }) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in - Privacy Relay</title></head>
<body>
<h1>Sign in to Privacy Relay</h1>
<p>The application <code>${escapeHtml(input.clientId)}</code> asks to know who you are.</p>
${input.error === undefined ? "" : `<p role="alert"${input.code === undefined ? "" : ` data-error-code="${escapeHtml(input.code)}"`}>${escapeHtml(input.error)}</p>`}
<form method="post" action="${escapeHtml(input.action)}" autocomplete="on">
<label>E-mail <input type="email" name="email" required autocomplete="username"></label>
<label>Password <input type="password" name="password" required autocomplete="current-password"></label>
<button type="submit">Sign in</button>
</form>
</body></html>
`
