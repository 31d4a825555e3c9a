import { spansFromRegex, type Detector } from "./Detector.ts"

// A URL carrying a user name and password in its authority: "https://user:secret@host:5432". The span
// covers scheme, credentials and host[:port] (the path, which carries no credential, stays readable). The
// user may be empty ("redis://:secret@host"): the password alone is the secret.
const URL_WITH_CREDENTIALS =
  /\b[a-zA-Z][a-zA-Z0-9+.\-]{1,15}:\/\/[^\s:/@?#<>"']*:[^\s/@?#<>"']+@[A-Za-z0-9.\-_\[\]:]*[A-Za-z0-9\]]/g

export const urlCredentialsDetector: Detector = {
  type: "URL_CREDENTIALS",
  detect: (text) =>
    spansFromRegex(text, URL_WITH_CREDENTIALS, "URL_CREDENTIALS", (m) => ({ start: m.index, end: m.index + m[0].length }))
}
