#!/usr/bin/env python3
"""Check data/offers.yaml against docs/catalog.md (format 2) and data/gpu_catalog.yaml.

Usage: scripts/check_offers.py [--offers data/offers.yaml] [--catalog data/gpu_catalog.yaml] [--quiet]

Needs only the standard library and PyYAML. Exits 1 and lists every problem if a check fails;
prints a coverage table (GPU -> number of purchase / rental offers) either way.

Checks:
  * top-level keys and `format: 2`; per-section required and allowed keys (docs/catalog.md);
  * ids: unique (case-insensitive), allowed characters, rental id == provider/instance_type;
  * references: every offer's gpu is in the GPU catalog, vendor/provider exists and has the right
    kind, needs_host names a host; cards and baseboards at a datacenter site name a host;
  * prices: positive (0 is an error), `as_of` is YYYY-MM and not in the future, sources non-empty,
    estimates carry notes, spot < on-demand, per-GPU-hour within $0.01..$100, a rental has an
    on-demand price somewhere or an availability other than on_demand;
  * coverage: every GPU has >= 1 purchase and >= 1 rental offer, or a line in the GAPS comment block
    of offers.yaml ("#   no-purchase|no-rental GPU-ID: reason"); a GAPS line for a GPU that does
    have such an offer is also an error (stale note);
  * the GPU catalog is format 2 and carries no price:/cloud: blocks;
  * price sanity (issue 35; docs/cost-model.md, "Price sanity rules"): a new unit costs at least
    what a used one of the same GPU, form and size costs; a new A100, H100 or B200 costs per GPU
    within its sourced band (data/cost.yaml, price_sanity; a server or rack up to
    server_over_card_ratio times the band's top); a server or rack costs at least its GPUs' lowest new card price; five years of the
    cheapest on-demand hour cost at least the purchase, per GPU. A flagged offer either says why
    in its notes, with the word "sanity" and the rule, or is an error.
"""

import argparse
import os
import re
import sys
import time

try:
    import yaml
except ImportError:
    sys.exit("check_offers: needs PyYAML (Debian: python3-yaml)")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The current month (UTC): an as_of after it is in the future. Was the fixed "2026-12", which
# would have flagged every price dated from 2027-01 on.
TODAY = time.strftime("%Y-%m", time.gmtime())

TOP_KEYS = {"format", "as_of", "gpus", "providers", "hosts", "purchase", "rental"}
PROVIDER_REQ = {"id", "name", "kind"}
PROVIDER_OPT = {"tier"}
HOST_REQ = {"id", "name", "slots", "price", "price_kind", "as_of", "sources"}
HOST_OPT = {"notes", "includes", "vcpus", "power"}
PURCHASE_REQ = {"id", "vendor", "gpu", "name", "gpus", "form", "price", "price_kind", "as_of", "sources"}
PURCHASE_OPT = {"includes", "needs_host", "condition", "sites", "regions", "max_units", "notes", "vcpus", "system_power"}
RENTAL_REQ = {"id", "provider", "instance_type", "gpu", "gpus", "price_kind", "as_of", "sources", "prices"}
RENTAL_OPT = {"availability", "notes", "vcpus"}
PRICE_FIELDS = ("on_demand", "spot", "reserved_1y", "reserved_3y", "capacity_block")
PRICE_MAP_REQ = {"price"}
PRICE_MAP_OPT = {"price_kind", "as_of", "source"}

KINDS = {"cloud", "vendor"}
TIERS = {"hyperscaler", "neocloud", "marketplace"}
PRICE_KINDS = {"list", "msrp", "quote", "street", "reported", "estimate"}
FORMS = {"card", "baseboard", "server", "rack", "module"}
CONDITIONS = {"new", "used", "refurbished"}
SITES = {"datacenter", "office", "edge"}
# quota_gated: on-demand after a quota grant; its spot does not rank (the loader, offer_selection).
AVAILABILITY = {"on_demand", "reservation_only", "capacity_block_only", "quota_gated"}

ID_RE = re.compile(r"^[A-Za-z0-9_.\-/]+$")
PROVIDER_ID_RE = re.compile(r"^[a-z0-9-]+$")
AS_OF_RE = re.compile(r"^\d{4}-(0[1-9]|1[0-2])$")
USD_RE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*USD\s*$")
GAP_RE = re.compile(r"^#\s+(no-purchase|no-rental)\s+([A-Za-z0-9_.\-]+):\s*(\S.*)$")

# The price sanity constants (bands per family, server ratio, years of rent) are read from
# data/cost.yaml's price_sanity section, with their sources: the same values the binary's
# `catalog validate` uses.
FAMILIES = ("A100", "H100", "B200")
HOURS_PER_YEAR = 8760

PER_GPU_HOUR_MIN = 0.01
PER_GPU_HOUR_MAX = 100.0


class Checker:
    def __init__(self):
        self.errors = []

    def err(self, where, msg):
        self.errors.append(f"{where}: {msg}")

    # ---------------------------------------------------------------- field helpers
    def keys(self, where, obj, req, opt):
        if not isinstance(obj, dict):
            self.err(where, "not a mapping")
            return False
        for k in sorted(req - obj.keys()):
            self.err(where, f"missing required field '{k}'")
        for k in sorted(obj.keys() - req - opt):
            self.err(where, f"unknown field '{k}'")
        return True

    def as_of(self, where, value):
        s = str(value) if value is not None else ""
        if not AS_OF_RE.match(s):
            self.err(where, f"as_of '{value}' is not YYYY-MM")
        elif s > TODAY:
            self.err(where, f"as_of {s} is in the future (today {TODAY})")

    def sources(self, where, value):
        if not isinstance(value, list) or not value or not all(isinstance(s, str) and s.strip() for s in value):
            self.err(where, "sources must be a non-empty list of non-empty strings")

    def price_kind(self, where, value):
        if value not in PRICE_KINDS:
            self.err(where, f"price_kind '{value}' not in {sorted(PRICE_KINDS)}")

    def usd(self, where, value):
        """A purchase/host price: '12345USD' (or a bare number). Returns float or None."""
        if isinstance(value, bool):
            self.err(where, f"price {value!r} is not a number")
            return None
        if isinstance(value, (int, float)):
            amount = float(value)
        else:
            m = USD_RE.match(str(value))
            if not m:
                self.err(where, f"price '{value}' is not '<number>USD'")
                return None
            amount = float(m.group(1))
        if amount <= 0:
            self.err(where, f"price {value} must be > 0 (absent = not published)")
            return None
        return amount

    def hourly(self, where, value, offer_kind):
        """A rental price: number or {price, price_kind, as_of, source}; spot may give
        {zones: [...]} instead of price (every availability zone's price; gpusel ranks on their
        median). Returns (amount, kind); for zones the amount is the highest zone's, so that the
        checks below (below on-demand, per-GPU range) hold for every zone."""
        kind = offer_kind
        if isinstance(value, dict) and "zones" in value and where.endswith(" spot"):
            zones = value["zones"]
            if "price" in value:
                self.err(where, "give price or zones, not both")
            if not isinstance(zones, list) or not zones:
                self.err(where, "zones must be a non-empty list of prices")
                return None, kind
            for zone in zones:
                if isinstance(zone, bool) or not isinstance(zone, (int, float)) or zone <= 0:
                    self.err(where, f"zone price {zone!r} is not a positive number (USD per instance-hour)")
                    return None, kind
            value = dict(value)
            del value["zones"]
            value["price"] = max(zones)
        if isinstance(value, dict):
            if not self.keys(where, value, PRICE_MAP_REQ, PRICE_MAP_OPT):
                return None, kind
            if "price_kind" in value:
                self.price_kind(where, value["price_kind"])
                kind = value["price_kind"]
            if "as_of" in value:
                self.as_of(where, value["as_of"])
            if "source" in value and not (isinstance(value["source"], str) and value["source"].strip()):
                self.err(where, "source must be a non-empty string")
            value = value.get("price")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.err(where, f"price {value!r} is not a number (USD per instance-hour)")
            return None, kind
        if value <= 0:
            self.err(where, f"price {value} must be > 0 (absent = not published)")
            return None, kind
        return float(value), kind


def load_gaps(path):
    gaps = {"no-purchase": {}, "no-rental": {}}
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = GAP_RE.match(line.rstrip("\n"))
            if m:
                gaps[m.group(1)][m.group(2).upper()] = m.group(3)
    return gaps


def amount_of(value):
    """A price as written (12345USD, a number, or {price: ...}), or None."""
    if isinstance(value, dict):
        value = value.get("price")
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    m = USD_RE.match(str(value)) if value is not None else None
    return float(m.group(1)) if m else None


def load_sanity_rules(path=os.path.join(ROOT, "data", "cost.yaml")):
    """{bands: {family: (low, high)}, server_over_card_ratio, rent_years} from data/cost.yaml."""
    with open(path, encoding="utf-8") as f:
        section = yaml.safe_load(f)["price_sanity"]
    return {
        "bands": {family: (section[f"{family.lower()}_low_usd"]["value"], section[f"{family.lower()}_high_usd"]["value"])
                  for family in FAMILIES},
        "server_over_card_ratio": section["server_over_card_ratio"]["value"],
        "rent_years": section["rent_years"]["value"],
    }


def price_family(gpu_id, bands):
    for family in bands:
        if gpu_id.upper().startswith(family):
            return family
    return None


def sanity_flags(purchases, rentals, rules=None, usd=amount_of):
    """Price sanity findings: (offer, rule, message), in offer order then rule order, as
    `gpusel catalog validate` gives them (src/cost/price_sanity.cpp). `purchases` and `rentals`
    are the offers that passed the field checks; `rules` defaults to data/cost.yaml's."""
    rules = rules or load_sanity_rules()
    bands = rules["bands"]
    years = rules["rent_years"]
    flags = []

    def per_gpu(o):
        amount = usd(o["price"])
        return None if amount is None else amount / o["gpus"]

    used = [o for o in purchases if o.get("condition", "new") != "new"]

    def unit(o):
        return str(o["gpu"]).upper(), o["form"], o["gpus"]

    cards = {}
    for o in purchases:
        if o.get("condition", "new") == "new" and o["form"] in ("card", "module") and per_gpu(o) is not None:
            gpu = str(o["gpu"]).upper()
            cards[gpu] = min(cards.get(gpu, per_gpu(o)), per_gpu(o))
    cheapest_hour = {}
    for o in rentals:
        for price in o["prices"]:
            amount = usd(price.get("on_demand")) if isinstance(price, dict) else None
            if amount is not None:
                gpu = str(o["gpu"]).upper()
                hour = amount / o["gpus"]
                if gpu not in cheapest_hour or hour < cheapest_hour[gpu][0]:
                    cheapest_hour[gpu] = (hour, o["id"])
    for o in purchases:
        price = per_gpu(o)
        if price is None or o.get("condition", "new") != "new":
            continue
        gpu = str(o["gpu"]).upper()
        for u in used:
            if unit(u) == unit(o) and per_gpu(u) is not None and price < per_gpu(u):
                flags.append((o, "new >= used", f"new ${price:,.0f} per GPU is below used {u['id']} at "
                                                f"${per_gpu(u):,.0f}"))
        system = o["form"] in ("server", "rack")
        family = price_family(gpu, bands)
        if family:
            low, high = bands[family]
            top = high * rules["server_over_card_ratio"] if system else high
            if not low <= price <= top:
                flags.append((o, "band", f"${price:,.0f} per GPU outside the {family} band ${low:,.0f}..${top:,.0f}"))
        if system and gpu in cards and price < cards[gpu]:
            flags.append((o, "system >= cards", f"${price:,.0f} per GPU is below the lowest new card, ${cards[gpu]:,.0f}"))
        if gpu in cheapest_hour:
            hour, rental = cheapest_hour[gpu]
            rent = hour * HOURS_PER_YEAR * years
            if rent < price:
                flags.append((o, f"rent x {years:g} years >= purchase",
                              f"${price:,.0f} per GPU is more than {years:g} years of {rental} "
                              f"on demand (${hour:.2f} per GPU-hour = ${rent:,.0f})"))
    return flags


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--offers", default=os.path.join(ROOT, "data", "offers.yaml"))
    ap.add_argument("--catalog", default=os.path.join(ROOT, "data", "gpu_catalog.yaml"))
    ap.add_argument("--quiet", action="store_true", help="do not print the coverage table")
    args = ap.parse_args()

    c = Checker()
    with open(args.offers, encoding="utf-8") as f:
        offers = yaml.safe_load(f)
    with open(args.catalog, encoding="utf-8") as f:
        catalog = yaml.safe_load(f)

    # ---------------------------------------------------------------- GPU catalog
    if catalog.get("format") != 2:
        c.err("gpu_catalog", f"format is {catalog.get('format')!r}, expected 2")
    gpus = {}
    for g in catalog.get("gpus") or []:
        gid = str(g.get("id"))
        gpus[gid.upper()] = gid
        for legacy in ("price", "cloud"):
            if legacy in g:
                c.err(f"gpu_catalog {gid}", f"has a format-1 '{legacy}:' block (prices belong in offers.yaml)")
    if not gpus:
        c.err("gpu_catalog", "no GPUs")

    # ---------------------------------------------------------------- top level
    if not isinstance(offers, dict):
        c.err("offers", "not a mapping")
        offers = {}
    for k in sorted(offers.keys() - TOP_KEYS):
        c.err("offers", f"unknown top-level key '{k}'")
    if offers.get("format") != 2:
        c.err("offers", f"format is {offers.get('format')!r}, expected 2")
    if "as_of" in offers:
        c.as_of("offers", offers["as_of"])
    if not any(offers.get(k) for k in ("gpus", "providers", "hosts", "purchase", "rental")):
        c.err("offers", "no list present")

    # ---------------------------------------------------------------- providers
    providers = {}
    for i, p in enumerate(offers.get("providers") or []):
        where = f"providers[{i}] {p.get('id') if isinstance(p, dict) else ''}"
        if not c.keys(where, p, PROVIDER_REQ, PROVIDER_OPT):
            continue
        pid = str(p["id"])
        if not PROVIDER_ID_RE.match(pid):
            c.err(where, "id must be lower-case letters, digits and '-'")
        if pid in providers:
            c.err(where, "duplicate provider id")
        if p["kind"] not in KINDS:
            c.err(where, f"kind '{p['kind']}' not in {sorted(KINDS)}")
        if p["kind"] == "cloud" and p.get("tier") not in TIERS:
            c.err(where, f"cloud provider needs tier in {sorted(TIERS)}")
        providers[pid] = p

    def vcpus_checked(where, entry):
        """vcpus: a whole number of host CPU threads, and a source that names where it was read."""
        if "vcpus" not in entry:
            return
        v = entry["vcpus"]
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            c.err(where, "vcpus must be a whole number >= 1")
        elif not any("vcpu" in str(s).lower() for s in entry.get("sources") or []):
            c.err(where, "vcpus needs a source: a sources line that says where the vCPU count was read")

    def power_checked(where, entry, key, label):
        """power / system_power: watts written with their unit ('1100W'), and a sources line
        that starts with the label and says where the figure comes from."""
        if key not in entry:
            return
        m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*W", str(entry[key]))
        if m is None or float(m.group(1)) <= 0:
            c.err(where, f"{key} must be watts with the unit, e.g. 1100W")
        elif not any(str(s).lower().startswith(label + ":") for s in entry.get("sources") or []):
            c.err(where, f"{key} needs a source: a sources line that starts with '{label}:'")

    # ---------------------------------------------------------------- hosts
    hosts = {}
    for i, h in enumerate(offers.get("hosts") or []):
        where = f"hosts[{i}] {h.get('id') if isinstance(h, dict) else ''}"
        if not c.keys(where, h, HOST_REQ, HOST_OPT):
            continue
        hid = str(h["id"])
        if not ID_RE.match(hid):
            c.err(where, "id has characters other than letters, digits, - _ . /")
        if hid.lower() in hosts:
            c.err(where, "duplicate host id")
        hosts[hid.lower()] = h
        vcpus_checked(where, h)
        power_checked(where, h, "power", "power")
        if not isinstance(h["slots"], int) or isinstance(h["slots"], bool) or h["slots"] < 1:
            c.err(where, "slots must be an integer >= 1")
        c.usd(where, h["price"])
        c.price_kind(where, h["price_kind"])
        c.as_of(where, h["as_of"])
        c.sources(where, h["sources"])
        if h["price_kind"] == "estimate" and not str(h.get("notes") or "").strip():
            c.err(where, "estimate without notes (the derivation)")

    # ---------------------------------------------------------------- purchase
    offer_ids = {}
    sane_purchases, sane_rentals = [], []
    purchase_count = {g: 0 for g in gpus}
    rental_count = {g: 0 for g in gpus}

    def offer_id(where, oid):
        if not ID_RE.match(oid):
            c.err(where, "id has characters other than letters, digits, - _ . /")
        if oid.lower() in offer_ids:
            c.err(where, f"duplicate offer id (also {offer_ids[oid.lower()]})")
        offer_ids[oid.lower()] = where

    def gpu_ref(where, gid):
        key = str(gid).upper()
        if key not in gpus:
            c.err(where, f"gpu '{gid}' is not in the GPU catalog")
            return None
        return key

    for i, o in enumerate(offers.get("purchase") or []):
        where = f"purchase[{i}] {o.get('id') if isinstance(o, dict) else ''}"
        if not c.keys(where, o, PURCHASE_REQ, PURCHASE_OPT):
            continue
        offer_id(where, str(o["id"]))
        vcpus_checked(where, o)
        power_checked(where, o, "system_power", "system power")
        if "system_power" in o and o.get("form") not in ("server", "rack"):
            c.err(where, "system_power is for servers and racks; a card's host carries its power")
        if o["id"] != str(o["id"]).lower():
            c.err(where, "purchase ids are lower-case")
        v = providers.get(str(o["vendor"]))
        if v is None:
            c.err(where, f"vendor '{o['vendor']}' is not a provider")
        elif v["kind"] != "vendor":
            c.err(where, f"vendor '{o['vendor']}' is of kind {v['kind']}, not vendor")
        g = gpu_ref(where, o["gpu"])
        if not isinstance(o["gpus"], int) or isinstance(o["gpus"], bool) or o["gpus"] < 1:
            c.err(where, "gpus must be a whole number >= 1")
        if o["form"] not in FORMS:
            c.err(where, f"form '{o['form']}' not in {sorted(FORMS)}")
        if not str(o["name"]).strip():
            c.err(where, "empty name")
        cond = o.get("condition", "new")
        if cond not in CONDITIONS:
            c.err(where, f"condition '{cond}' not in {sorted(CONDITIONS)}")
        sites = o.get("sites", ["datacenter"])
        if not isinstance(sites, list) or not sites or any(s not in SITES for s in sites):
            c.err(where, f"sites {sites!r} must be a non-empty list of {sorted(SITES)}")
            sites = []
        if "regions" in o and not isinstance(o["regions"], list):
            c.err(where, "regions must be a list")
        if "includes" in o and not isinstance(o["includes"], list):
            c.err(where, "includes must be a list")
        if "max_units" in o and (not isinstance(o["max_units"], int) or o["max_units"] < 1):
            c.err(where, "max_units must be an integer >= 1")
        nh = o.get("needs_host")
        if nh is not None and str(nh).lower() not in hosts:
            c.err(where, f"needs_host '{nh}' is not a host")
        if o["form"] in ("card", "baseboard") and "datacenter" in sites and nh is None:
            c.err(where, f"a {o['form']} at a datacenter site needs needs_host")
        c.usd(where, o["price"])
        c.price_kind(where, o["price_kind"])
        c.as_of(where, o["as_of"])
        c.sources(where, o["sources"])
        if o["price_kind"] == "estimate" and not str(o.get("notes") or "").strip():
            c.err(where, "estimate without notes (the derivation)")
        if g is not None:
            purchase_count[g] += 1
            if isinstance(o["gpus"], int) and o["gpus"] >= 1 and o["form"] in FORMS:
                sane_purchases.append(o)

    # ---------------------------------------------------------------- rental
    for i, o in enumerate(offers.get("rental") or []):
        where = f"rental[{i}] {o.get('id') if isinstance(o, dict) else ''}"
        if not c.keys(where, o, RENTAL_REQ, RENTAL_OPT):
            continue
        oid = str(o["id"])
        offer_id(where, oid)
        if oid != f"{o['provider']}/{o['instance_type']}":
            c.err(where, f"id should be '{o['provider']}/{o['instance_type']}'")
        p = providers.get(str(o["provider"]))
        if p is None:
            c.err(where, f"provider '{o['provider']}' is not a provider")
        elif p["kind"] != "cloud":
            c.err(where, f"provider '{o['provider']}' is of kind {p['kind']}, not cloud")
        g = gpu_ref(where, o["gpu"])
        n = o["gpus"]
        if isinstance(n, bool) or not isinstance(n, (int, float)) or n <= 0 or (not isinstance(n, int) and n > 1):
            c.err(where, "gpus must be a whole number >= 1 (a fraction <= 1 only for fractional rentals)")
            n = None
        vcpus_checked(where, o)
        avail = o.get("availability", "on_demand")
        if avail not in AVAILABILITY:
            c.err(where, f"availability '{avail}' not in {sorted(AVAILABILITY)}")
        c.price_kind(where, o["price_kind"])
        c.as_of(where, o["as_of"])
        c.sources(where, o["sources"])
        has_estimate = o["price_kind"] == "estimate"
        prices = o["prices"]
        any_on_demand = False
        if not isinstance(prices, list) or not prices:
            c.err(where, "prices must be a non-empty list")
            prices = []
        regions = set()
        for j, pr in enumerate(prices):
            pw = f"{where} prices[{j}]"
            if not c.keys(pw, pr, {"region"}, set(PRICE_FIELDS)):
                continue
            reg = str(pr["region"])
            if reg in regions:
                c.err(pw, f"region '{reg}' listed twice")
            regions.add(reg)
            amounts = {}
            for fld in PRICE_FIELDS:
                if fld not in pr:
                    continue
                amount, kind = c.hourly(f"{pw} {fld}", pr[fld], o["price_kind"])
                has_estimate = has_estimate or kind == "estimate"
                if amount is None:
                    continue
                amounts[fld] = amount
                if n:
                    per_gpu = amount / n
                    if not (PER_GPU_HOUR_MIN <= per_gpu <= PER_GPU_HOUR_MAX):
                        c.err(f"{pw} {fld}", f"{per_gpu:.4f} USD per GPU-hour outside "
                                             f"{PER_GPU_HOUR_MIN}..{PER_GPU_HOUR_MAX}")
            if "on_demand" in amounts:
                any_on_demand = True
                for fld in ("spot", "reserved_1y", "reserved_3y"):
                    if fld in amounts and amounts[fld] >= amounts["on_demand"]:
                        c.err(f"{pw} {fld}", f"{amounts[fld]} is not below on-demand {amounts['on_demand']}")
        if not any_on_demand and avail == "on_demand":
            c.err(where, "no on-demand price and availability is on_demand")
        if any_on_demand and avail not in ("on_demand", "quota_gated"):
            c.err(where, f"availability {avail} but an on-demand price is given")
        if has_estimate and not str(o.get("notes") or "").strip():
            c.err(where, "estimate without notes (the derivation)")
        if g is not None:
            rental_count[g] += 1
            if n:
                sane_rentals.append(o)

    # ---------------------------------------------------------------- price sanity
    flags = sanity_flags(sane_purchases, sane_rentals)
    explained = 0
    for o, rule, message in flags:
        if "sanity" in str(o.get("notes") or "").lower():
            explained += 1
        else:
            c.err(f"purchase {o['id']}", f"price sanity ({rule}): {message}; correct it from a better source, "
                                         f"or say why in notes (with the word 'sanity')")

    # ---------------------------------------------------------------- coverage
    gaps = load_gaps(args.offers)
    for kind, counts in (("no-purchase", purchase_count), ("no-rental", rental_count)):
        for g in gaps[kind]:
            if g not in gpus:
                c.err("GAPS", f"{kind} {g}: not a GPU in the catalog")
            elif counts[g] > 0:
                c.err("GAPS", f"{kind} {gpus[g]}: stale note, the GPU has {counts[g]} such offer(s)")
        for g, n in counts.items():
            if n == 0 and g not in gaps[kind]:
                what = "purchase" if kind == "no-purchase" else "rental"
                c.err("coverage", f"{gpus[g]} has no {what} offer and no '{kind}' line in the GAPS block")

    if not args.quiet:
        order = [str(g.get("id")).upper() for g in catalog.get("gpus") or []]
        width = max(len(gpus[g]) for g in order) if order else 10
        print(f"{'GPU':<{width}}  purchase  rental  note")
        for g in order:
            note = "; ".join(f"{k}: {gaps[k][g]}" for k in ("no-purchase", "no-rental") if g in gaps[k])
            if len(note) > 70:
                note = note[:67] + "..."
            print(f"{gpus[g]:<{width}}  {purchase_count[g]:>8}  {rental_count[g]:>6}  {note}")
        print(f"{len(offers.get('providers') or [])} providers, {len(hosts)} hosts, "
              f"{sum(purchase_count.values())} purchase offers, {sum(rental_count.values())} rental offers")
        print(f"price sanity: {len(flags)} finding(s), {explained} explained in the offer's notes")
        for o, rule, message in flags:
            print(f"  {o['id']}: {rule}: {message}")

    if c.errors:
        print(f"\n{len(c.errors)} problem(s):", file=sys.stderr)
        for e in c.errors:
            print("  " + e, file=sys.stderr)
        return 1
    print("check_offers: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
