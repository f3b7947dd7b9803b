#ifndef BOLTS_TOKEN_H
#define BOLTS_TOKEN_H
/* Cancellation tokens: owned by the cancellation work (see issue 3). */
#endif
