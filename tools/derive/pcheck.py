import yaml, sys, re
d = yaml.safe_load(open(sys.argv[1]))
def num(s):
    if isinstance(s, (int, float)): return float(s)
    m = re.fullmatch(r'([0-9.]+)([KMBT]?)', str(s)); mult = {'': 1, 'K': 1e3, 'M': 1e6, 'B': 1e9, 'T': 1e12}[m.group(2)]
    return float(m.group(1)) * mult
print(f"{'name':14} {'params':>8} {'rule':>8} {'dev%':>6} {'exact':>8} {'dev%':>6}")
for e in d['models']:
    if 'layers' not in e: continue
    L, h, a, kv, hd, f = e['layers'], e['hidden'], e['heads'], e['kv_heads'], e['head_dim'], e['ffn']
    V = e.get('vocab', 0); P = num(e['params']); tied = e.get('tied_embeddings', False)
    rule = 12 * L * h * h + V * h * (1 if tied or V == 0 else 2)
    if e['name'] == 'vit-b-16' or e['name'] == 'vit-l-16': rule += 16*16*3*h + 197*h
    # detailed: attention q,o = a*hd*h each; k,v = kv*hd*h each; ffn = (3 if gated else 2)*h*f; MoE: * experts
    att = 2 * a * hd * h + 2 * kv * hd * h
    mlp = (3 if e.get('ffn_gated') else 2) * h * f * (e.get('experts') or 1)
    if e['family'] == 'encoder-decoder':
        # half encoder layers (self-attn + mlp), half decoder (self + cross attn + mlp)
        exact = L // 2 * (att + mlp) + L // 2 * (2 * att + mlp)
    else:
        exact = L * (att + mlp)
    exact += V * h * (1 if tied or V == 0 else 2)
    if e['name'].startswith('vit'): exact += 16*16*3*h + 197*h + h*1000
    if e['family'] in ('encoder',) or e['name'].startswith('gpt2') or e['name'].startswith('gpt-j'):
        exact += e['max_context'] * h if not e['name'].startswith('gpt-j') else 0
    line = f"{e['name']:14} {P/1e9:8.3f} {rule/1e9:8.3f} {100*(rule-P)/P:6.1f} {exact/1e9:8.3f} {100*(exact-P)/P:6.1f}"
    if e.get('active_params'):
        act = L * (att + (3 if e.get('ffn_gated') else 2) * h * f * e['top_k']) + V * h * (1 if tied else 2)
        line += f"   active {num(e['active_params'])/1e9:.2f} vs {act/1e9:.2f}"
    print(line)
