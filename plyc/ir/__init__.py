"""The typed core IR and its passes (docs/design.md)."""
