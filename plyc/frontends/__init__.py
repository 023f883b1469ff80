"""Front ends: one package per source language, each producing plyc's IR."""
