"""Text to algebra: the lark grammar (``spaseq.lark``), the parser (``parser``), translation to
algebra (``translate``), static checks (``checks``), and the front door ``query.parse_query``."""
