"""What every stage shares: geometry, Unicode scripts, MuPDF access, memory release, the stage contracts."""
