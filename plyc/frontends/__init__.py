"""Front ends: each turns its language into the core IR (plyc/ir/)."""
