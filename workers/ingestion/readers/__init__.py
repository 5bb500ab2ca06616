"""One reader per format; each turns a file into a ParsedDocument or a DocumentError."""
