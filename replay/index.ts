export { verify, type VerifyOptions, type VerifyResult } from './verify.js'
