const s = JSON.parse(require('fs').readFileSync(process.argv[2]))
const m = s.snapshot.meta, nf = m.node_fields.length, types = m.node_types[0], strings = s.strings
const want = process.argv[3]
const by = new Map()
for (let i = 0; i < s.nodes.length; i += nf) {
  const t = types[s.nodes[i]]; if (t !== want) continue
  const name = strings[s.nodes[i + 1]].slice(0, 80), size = s.nodes[i + 3]
  const e = by.get(name) || [0, 0]; e[0]++; e[1] += size; by.set(name, e)
}
;[...by].sort((a, b) => b[1][1] - a[1][1]).slice(0, 25).forEach(([k, v]) => console.log(v[0], v[1], JSON.stringify(k)))
