"""The releases of a range: a name's state in each (`driftaudit history`) and when each
finding's change came (`introduced`, `deprecated`)."""
