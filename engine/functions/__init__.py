"""The spaseq SPARQL functions as the engine uses them: the table (``registry``), stream and run
functions, their argument values and static checks. ``spaseq.extension_functions`` is the public
door that binds them to rdflib and pyoxigraph; the engine never imports that package."""
