#!/usr/bin/env python3
"""The price sanity rules of scripts/check_offers.py on hand-made offers: each rule fires on the
case it names, with the figures worked out by hand below, and stays quiet just inside its bound.
The constants are data/cost.yaml's (price_sanity): H100 25,000..41,250, B200 30,000..40,000,
server ratio 1.64, 5 years of rent.

usage: check_offers_sanity.py   (any working directory)"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import check_offers  # noqa: E402

failures = []


def expect(name, actual, expected):
    if actual != expected:
        failures.append(f"{name}:\n  expected {expected!r}\n  got      {actual!r}")


def purchase(oid, gpu, form, gpus, price, condition="new"):
    return {"id": oid, "gpu": gpu, "form": form, "gpus": gpus, "price": price, "condition": condition}


def rental(oid, gpu, gpus, on_demand):
    return {"id": oid, "gpu": gpu, "gpus": gpus, "prices": [{"region": "any", "on_demand": on_demand}]}


def findings(purchases, rentals=()):
    return [(o["id"], rule, message) for o, rule, message in check_offers.sanity_flags(purchases, list(rentals))]


# new >= used, same GPU, form and size: the old DGX H100 figure ($199,000 = $24,875 per GPU)
# against the used HGX estimate ($288,000 = $36,000 per GPU). $24,875 is also under the H100
# band's $25,000 floor.
used_hgx = purchase("used-hgx", "H100-SXM5", "server", 8, "288000USD", condition="used")
expect("DGX H100 at 199,000", findings([purchase("dgx", "H100-SXM5", "server", 8, "199000USD"), used_hgx]), [
    ("dgx", "new >= used", "new $24,875 per GPU is below used used-hgx at $36,000"),
    ("dgx", "band", "$24,875 per GPU outside the H100 band $25,000..$67,650"),
])
# The corrected figure: $329,736 / 8 = $41,217 per GPU, above used, inside 25,000..41,250 x 1.64.
expect("DGX H100 at 329,736", findings([purchase("dgx", "H100-SXM5", "server", 8, "329736USD"), used_hgx]), [])
# A used unit of another form does not count: a used card against a new server.
expect("other form", findings([purchase("dgx", "H100-SXM5", "server", 8, "300000USD"),
                               purchase("card", "H100-SXM5", "card", 1, "40000USD", condition="used")]), [])

# Band for a card: 41,250 is the top, 41,251 is out; a server may reach 41,250 x 1.64 = 67,650.
expect("H100 card at the top", findings([purchase("c", "H100-PCIE", "card", 1, "41250USD")]), [])
expect("H100 card over the top", findings([purchase("c", "H100-PCIE", "card", 1, "41251USD")]),
       [("c", "band", "$41,251 per GPU outside the H100 band $25,000..$41,250")])
expect("B200 server at 8 x 67,000", findings([purchase("s", "B200", "server", 8, "536000USD")]),
       [("s", "band", "$67,000 per GPU outside the B200 band $30,000..$65,600")])
expect("no band for L40S", findings([purchase("c", "L40S", "card", 1, "1USD")]), [])

# A system costs at least its GPUs: 4 x L40S in a $30,000 server is 7,500 per GPU, under the
# 8,000 card.
expect("server below its cards", findings([purchase("card", "L40S", "card", 1, "8000USD"),
                                           purchase("srv", "L40S", "server", 4, "30000USD")]),
       [("srv", "system >= cards", "$7,500 per GPU is below the lowest new card, $8,000")])

# Five years of rent: 0.20 USD per GPU-hour x 8,760 x 5 = 8,760 < a 9,000 card; 0.21 gives 9,198.
expect("rent below purchase", findings([purchase("card", "L40S", "card", 1, "9000USD")],
                                       [rental("cloud/x", "L40S", 1, 0.20)]),
       [("card", "rent x 5 years >= purchase",
         "$9,000 per GPU is more than 5 years of cloud/x on demand ($0.20 per GPU-hour = $8,760)")])
expect("rent above purchase", findings([purchase("card", "L40S", "card", 1, "9000USD")],
                                       [rental("cloud/x", "L40S", 8, 1.68)]), [])

for failure in failures:
    print("FAIL", failure)
print(f"{len(failures)} failures")
sys.exit(1 if failures else 0)
