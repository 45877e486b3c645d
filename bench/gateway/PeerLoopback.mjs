// Preload for the peer gateway (`node --import`): it listens on every interface by default; the
// bench keeps every server on loopback, so any listen without a host is bound to 127.0.0.1.
import net from "node:net"

const listen = net.Server.prototype.listen
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === "number" || typeof args[0] === "string") {
    const callback = args.find((arg) => typeof arg === "function")
    return listen.call(this, Number(args[0]), "127.0.0.1", callback)
  }
  if (args[0] !== null && typeof args[0] === "object" && args[0].host === undefined)
    args[0] = { ...args[0], host: "127.0.0.1" }
  return listen.apply(this, args)
}
