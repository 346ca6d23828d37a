"""A SPAseq query over a recorded stream held in an rdflib Dataset, through the query
processor spaseq registers with rdflib (python examples/rdflib_dataset.py)."""

from rdflib import Dataset

# Each event is a named graph with its time (prov:generatedAtTime) and its stream
# (spaseq:stream) in the default graph; a named graph without a time is knowledge base.
RECORDING = """
@prefix : <http://ex.org/> .
@prefix prov: <http://www.w3.org/ns/prov#> .
@prefix spaseq: <https://w3id.org/spaseq#> .
:o1 prov:generatedAtTime 10 ; spaseq:stream :orders .
:o1 { :order1 :customer :ann ; :item :lamp . }
:o2 prov:generatedAtTime 20 ; spaseq:stream :orders .
:o2 { :order2 :customer :ben ; :item :desk . }
:p1 prov:generatedAtTime 25 ; spaseq:stream :payments .
:p1 { :pay1 :customer :ben ; :amount 300 . }
:p2 prov:generatedAtTime 90 ; spaseq:stream :payments .
:p2 { :pay2 :customer :ann ; :amount 40 . }
:kb { :ann :tier :gold . :ben :tier :silver . }
"""

# An order, then the same customer's next payment within a minute, with the customer's tier.
QUERY = """
PREFIX : <http://ex.org/>
SELECT ?customer ?item ?amount ?tier
WITHIN 1 MINUTE
FROM STREAM O <http://ex.org/orders>
FROM STREAM P <http://ex.org/payments>
WHERE {
  SEQ (A; B)
  DEFINE GPM A ON O { ?order :customer ?customer ; :item ?item .
                      GRAPH :kb { ?customer :tier ?tier } }
  DEFINE GPM B ON P { ?pay :customer ?customer ; :amount ?amount }
}"""

ds = Dataset()
ds.parse(data=RECORDING, format="trig")
result = ds.query(QUERY, processor="spaseq")

print("variables:", [str(v) for v in result.vars])
for row, match in zip(result, result.bindings, strict=True):
    # each binding also knows its match: start, time (end) and the events taken
    taken = " ".join(f"{e.atom}={e.graph}@{e.time}" for e in match.events)
    print(match.start, match.time, row.customer, row.item, row.amount, row.tier, taken)
print(result.serialize(format="csv").decode().strip())
