"""File input and output: replay files, stream description files, knowledge bases, match output."""
