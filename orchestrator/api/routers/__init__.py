"""One router per resource of the producer API."""
