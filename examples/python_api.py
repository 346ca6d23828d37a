"""The Python API: register a query with a callback, push events as they happen, and see
each match the moment it completes (python examples/python_api.py)."""

from pyoxigraph import Literal, NamedNode, Triple

from spaseq.engine.api import Engine

EX = "http://ex.org/"
DOORS = EX + "doors"
QUERY = """
PREFIX : <http://ex.org/>
SELECT ?door ?who
WITHIN 30 SECONDS
FROM STREAM D <http://ex.org/doors>
WHERE {
  SEQ (O; C!)
  DEFINE GPM O ON D { ?door :state "open" ; :by ?who }
  DEFINE GPM C ON D { ?door :state "closed" }
}"""  # a door opened and not closed within 30 seconds (a trailing negation)


def left_open(match):
    """Called by the engine as soon as a match completes."""
    m = match.mapping
    print(f"  match: {m['door'].value} opened by {m['who'].value} at t={match.time}")


engine = Engine()
handle = engine.register(QUERY, on_match=left_open)

# An event is a timestamp (seconds) and a graph: Turtle text here ...
print("t=0: d1 opened")
engine.push(DOORS, 0, '<http://ex.org/d1> <http://ex.org/state> "open" ; <http://ex.org/by> <http://ex.org/alice> .',
            format="turtle")
# ... or pyoxigraph triples (an rdflib Graph works too)
print("t=5: d2 opened")
d2 = NamedNode(EX + "d2")
engine.push(DOORS, 5, [Triple(d2, NamedNode(EX + "state"), Literal("open")),
                       Triple(d2, NamedNode(EX + "by"), NamedNode(EX + "bob"))])
print("t=12: d1 closed")
engine.push(DOORS, 12, '<http://ex.org/d1> <http://ex.org/state> "closed" .', format="turtle")

# A heartbeat: no event before t=40 will come, so d2's window (5, 35] closes now.
print("heartbeat t=40")
engine.advance_to(40)

print("t=50: d3 opened")
engine.push(DOORS, 50, '<http://ex.org/d3> <http://ex.org/state> "open" ; <http://ex.org/by> <http://ex.org/carol> .',
            format="turtle")
print("end of input")
engine.close()  # every window closes: d3 was never closed

# The handle kept the matches too, projected as the SELECT says.
for row in handle.rows():
    print("row:", {name: term.value for name, term in row.bindings.items()}, "time", row.time)
