const s = JSON.parse(require('fs').readFileSync(process.argv[2]))
const m = s.snapshot.meta, nf = m.node_fields.length, types = m.node_types[0], strings = s.strings
const by = new Map()
for (let i = 0; i < s.nodes.length; i += nf) {
  const t = types[s.nodes[i]], name = strings[s.nodes[i + 1]], size = s.nodes[i + 3]
  const k = t + ':' + (t === 'object' || t === 'closure' ? name : '')
  const e = by.get(k) || [0, 0]; e[0]++; e[1] += size; by.set(k, e)
}
;[...by].filter(([, v]) => v[0] >= 2000).sort((a, b) => b[1][1] - a[1][1]).slice(0, 40).forEach(([k, v]) => console.log(v[0], (v[1] / 2000).toFixed(0), 'B/agent', k))
