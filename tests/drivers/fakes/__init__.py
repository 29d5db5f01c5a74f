"""Scripted fake peers the drivers spawn, and local fake model APIs."""
