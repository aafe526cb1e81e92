// live-memory for OpenCode, written by `live-memory connect opencode` (removed by
// `live-memory disconnect opencode`). It hands OpenCode's file tool calls and session start to
// live-memory's shared hook client (notify.py, session-start.py: standard-library python3),
// which checks the server's identity before it sends anything.
import { spawn } from "node:child_process"

const HOOKS = "__LIVE_MEMORY_HOOKS__"
const ENV = __LIVE_MEMORY_ENV__
const READS = new Set(["read"])
const WRITES = new Set(["write", "edit", "patch", "multiedit"])
const TIMEOUT_MS = 5000
const MAX_PENDING = 256 // edits whose after-event has not come yet (their args are kept)

function hook(script, payload) {
  return new Promise((resolve) => {
    let child
    try {
      child = spawn("python3", ["-I", "-S", `${HOOKS}/${script}`, "opencode"], {
        env: { ...process.env, ...ENV },
        stdio: ["pipe", "ignore", "ignore"],
      })
    } catch {
      resolve()
      return
    }
    const timer = setTimeout(() => child.kill(), TIMEOUT_MS)
    const done = () => {
      clearTimeout(timer)
      resolve()
    }
    child.on("error", done)
    child.on("close", done)
    child.stdin.on("error", () => {})
    child.stdin.end(JSON.stringify(payload))
  })
}

export const LiveMemory = async ({ directory }) => {
  const pending = new Map()
  const call = (event, tool, args) =>
    hook("notify.py", { hook_event_name: event, tool_name: tool, tool_input: args ?? {}, cwd: directory })
  return {
    event: async ({ event }) => {
      if (event.type === "session.created") {
        await hook("session-start.py", { hook_event_name: "SessionStart", cwd: directory })
      }
    },
    // A read is teed before the tool runs (the bytes are the same), so that it reaches the
    // memory before anything the model does next; an edit after, with its new bytes.
    "tool.execute.before": async (input, output) => {
      if (READS.has(input.tool)) await call("tool.execute.before", input.tool, output.args)
      else if (WRITES.has(input.tool)) {
        if (pending.size >= MAX_PENDING) pending.delete(pending.keys().next().value)
        pending.set(input.callID, output.args)
      }
    },
    "tool.execute.after": async (input) => {
      if (!WRITES.has(input.tool)) return
      const args = input.args ?? pending.get(input.callID)
      pending.delete(input.callID)
      await call("tool.execute.after", input.tool, args)
    },
  }
}
