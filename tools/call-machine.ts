// The tool-call machine lives in machines/call.ts (exported by `turnlog/machines`); the tools
// layer's modules import it from here.
export * from '../machines/call.js'
