"""What kvdrill prints or writes for the user to read: progress figures and their page, charts, mock interview sheets, Markdown and web pages."""
