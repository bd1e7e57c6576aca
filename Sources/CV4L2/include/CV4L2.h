#ifndef CV4L2_H
#define CV4L2_H
#include <linux/videodev2.h>

/// ioctl(2) without the variadic argument, which Swift cannot pass.
int cv4l2_ioctl(int fd, unsigned long request, void *argument);

#endif
