/* tprof recover: the flight recorder's window a killed process left in
 * its flight file (record/flightfile.h), rebuilt as the trace the next
 * dump would have written (recover_flight.c). */
#ifndef TP_CLI_RECOVER_FLIGHT_H
#define TP_CLI_RECOVER_FLIGHT_H

/* Every flight file in dir whose process is gone: its window as a trace
 * (the chunks of the last TPROF_FLIGHT seconds, then the records its
 * rings held past their sync), its summary, and both files removed; one
 * line each. The number of flight files seen (each said something);
 * *failed is incremented for each that could not be recovered. */
int tp_recover_flights(const char *dir, int *failed);

#endif
