import { StrictMode } from "react"
import { createRoot } from "react-dom/client"
import { App } from "./App.tsx"
import { loadSdk } from "./engine.ts"
import "./styles.css"

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <App />
  </StrictMode>
)
// Start fetching the engine chunk at once, in parallel with React's first render.
void loadSdk()
