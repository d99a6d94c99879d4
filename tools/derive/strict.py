import yaml, re, sys
from yaml.constructor import ConstructorError
class Strict(yaml.SafeLoader): pass
def cm(loader, node, deep=False):
    keys = set()
    for k, v in node.value:
        key = loader.construct_object(k, deep=deep)
        if key in keys: raise ConstructorError(None, None, f"duplicate key {key!r}", k.start_mark)
        keys.add(key)
    return yaml.SafeLoader.construct_mapping(loader, node, deep)
Strict.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, cm)
txt = open(sys.argv[1]).read()
# aliases / anchors / merge keys via events
for ev in yaml.parse(txt, Loader=yaml.SafeLoader):
    if isinstance(ev, yaml.AliasEvent) or getattr(ev, 'anchor', None): sys.exit(f"anchor/alias at {ev.start_mark}")
assert '<<' not in txt and '\t' not in txt
d = yaml.load(txt, Loader=Strict)
assert set(d) == {'format', 'models'} and d['format'] == 1
allowed = set('name family params active_params layers hidden heads kv_heads head_dim ffn ffn_gated vocab experts top_k tied_embeddings max_context activation_per_sample flops_per_sample input source notes'.split())
fams = set('decoder encoder encoder-decoder moe-decoder cnn vit diffusion other'.split())
cnt = re.compile(r'^[0-9]+(\.[0-9]+)?[KMBT]$'); size = re.compile(r'^[0-9]+(\.[0-9]+)?(MiB|GiB|KiB|MB|GB)$'); fl = re.compile(r'^[0-9]+(\.[0-9]+)?(FLOP|KFLOP|MFLOP|GFLOP|TFLOP)$')
names = set()
for m in d['models']:
    assert set(m) <= allowed, (m['name'], set(m) - allowed)
    assert m['name'] not in names; names.add(m['name'])
    assert m['family'] in fams
    assert cnt.match(str(m['params'])), m['name']
    if 'active_params' in m: assert cnt.match(str(m['active_params']))
    for k in ('layers', 'hidden', 'heads', 'kv_heads', 'head_dim', 'ffn', 'vocab', 'experts', 'top_k', 'max_context'):
        if k in m: assert type(m[k]) is int and m[k] > 0, (m['name'], k)
    for k in ('ffn_gated', 'tied_embeddings'):
        if k in m: assert type(m[k]) is bool
    if 'activation_per_sample' in m: assert size.match(m['activation_per_sample']), m['name']
    if 'flops_per_sample' in m: assert fl.match(m['flops_per_sample']), m['name']
    assert str(m['source']).startswith('https://'), m['name']
    assert isinstance(m['notes'], str) and '#' not in m['notes'], m['name']
    if 'heads' in m: assert m['heads'] % m['kv_heads'] == 0
    if m['family'] == 'moe-decoder': assert 'experts' in m and 'top_k' in m and 'active_params' in m
# indentation: multiples of 2
for i, line in enumerate(txt.splitlines(), 1):
    ind = len(line) - len(line.lstrip(' '))
    assert ind % 2 == 0, i
print("OK", len(d['models']), "entries")
