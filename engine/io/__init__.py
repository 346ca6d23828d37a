"""Input: the native reader's events (replay files, request bodies, live input) as Python
``Event``s (``native_events``), stream description files (``streamfile``), knowledge-base
files (``kb``), and pyoxigraph's parser on the files read in Python (``parsing``)."""
