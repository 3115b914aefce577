"""The per-page flow: triage -> read -> check -> escalate, page status, engines by role, request options."""
