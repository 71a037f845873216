"""Text formats: Match ID and XGID, FIBS boards, the ASCII board, match records, one parser for any position."""
